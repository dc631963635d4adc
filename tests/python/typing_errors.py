"""Wrong uses of the binding that mypy must reject with waitio's stubs (python_sdist.sh expects
exactly the three errors marked below)."""
import waitio

world = waitio.universe()
world.Send(b"x", dest="one", tag=1)  # error: arg-type (dest is an int)
world.Isend(12345, 0)  # error: arg-type (an int is not a buffer)
rank: str = waitio.pb_rank()  # error: assignment (pb_rank returns an int)
