/*
 * compat_adapter_ref.c — installed as <libdir>/waitio_compat_adapter_ref.o and named by the
 * linker scripts libwaitio_mpi_<platform>.so (tools/waitio-compat-names.in), which give an
 * original WaitIO link line (-lwaitio_<platform> -lwaitio_mpi_<platform>) libwaitio and the
 * platform's MPI adapter. A program never calls the adapter: it is linked for its constructor,
 * and compilers that link --as-needed (Debian's, Ubuntu's gcc) drop a library nothing refers
 * to. This object refers to the adapter's one exported function, so the adapter stays. Not part
 * of libwaitio: compiled on its own, without sanitizers, as it goes into users' programs.
 */
extern const char *waitio_mpi_adapter_name(void);

__attribute__((used)) static const char *(*const keep_the_mpi_adapter)(void) = waitio_mpi_adapter_name;
