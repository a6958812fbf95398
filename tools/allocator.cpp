// The allocator of Argus's executables: jemalloc with transparent huge pages.
//
// Why: a compile spends much of its wall time in page faults, not in work. Each
// Z3 context (one per checker lane) and each SAT solve zero a few arrays of
// about 8.5 MB, and a fresh process touches every one of those pages for the
// first time; on the virtual machines we build and test on a 4 KB page fault
// costs about 10 us, so `argusc examples/vadd.ag` took 16,000 faults and 210 ms
// of which its checking is 25 ms. glibc's malloc can only be told to use huge
// pages through an environment variable read before main (GLIBC_TUNABLES);
// jemalloc reads `malloc_conf` from the executable itself. Measured in
// bench/results/compile.md (twenty-second session).
//
// This file is linked only when CMake found jemalloc (ARGUS_HAVE_JEMALLOC);
// without it the executables run on glibc's malloc, correct and slower.
extern "C" {
// The symbol jemalloc looks up at its first allocation; it must be a global of this name.
// NOLINTNEXTLINE(readability-identifier-naming)
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
