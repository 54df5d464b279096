// Package malloc caps the arenas of the C allocator that ONNX Runtime and
// MNN allocate from. Import it for its side effect, from main packages.
//
// glibc gives every thread that contends for the allocator an arena of
// its own, up to 8 per core, and memory freed into one arena serves only
// allocations made from it. Go runs cgo calls on whichever of its threads
// is free, so the engines' allocations spread over many arenas and what
// one model frees is not reused by the next: `bench stages`, which loads
// and closes one LLM after another, peaked at 687 MiB with glibc's default
// and at 374 MiB with one arena (docs/performance.md).
//
// glibc fixes the number of arenas the first time a second thread
// allocates, which happens before any Go code runs, so the setting is
// made by a C constructor, before the Go runtime starts. A
// MALLOC_ARENA_MAX in the environment is left to glibc.
package malloc

// Limited reports whether the allocator took the cap: glibc does, unless
// the user set MALLOC_ARENA_MAX; other C libraries (musl, Darwin's) have
// no such arenas, and builds without cgo no C allocator to cap.
func Limited() bool { return limited() }

// Trim gives the pages the C heap holds free back to the system. glibc
// keeps what a closed model freed for the next allocation; a benchmark
// that loads one model after another trims between them, so each model's
// memory is its own and not what the one before it left.
func Trim() { trim() }
