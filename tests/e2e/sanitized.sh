# tests/e2e/sanitized.sh, sourced by the suites that sweep many kernels (cuda_emu, gpu_lower,
# examples, metal, metal_runtime, differential). Under a sanitizer build (tests/run.sh sets
# TILEC_BUILD to build-asan or build-tsan) every case runs several times slower, and what the
# sanitizers look for (tilec's own memory and threads, and the kernels the emulators and the cpu
# backend build with ASan) shows on any kernel that takes a code path: there a sweep runs one
# case per example file and per variant group, while the plain build runs every case (the full
# numerical check). Each suite says what it left out.
case "${TILEC_BUILD:-build}" in *asan*|*tsan*) sanitized=1 ;; *) sanitized=0 ;; esac
# stdin -> stdout: every case, or under a sanitizer the first case of each kind: a line's kind is
# the line without its -D bindings and without the word `reverse` (so the target, the example
# file, its --kernel and the emulator's settings; a thread order alone is no new kind)
one_per_key() {
  if [ "$sanitized" = 1 ]; then
    awk '{ line = $0; gsub(/[|]/, " | ", line); n = split(line, w, " "); k = ""
           for (i = 1; i <= n; i++) { if (w[i] == "-D") { i++; continue } if (w[i] != "reverse") k = k " " w[i] } }
         !seen[k]++'
  else cat; fi
}
# stdin -> stdout: every line, or under a sanitizer the first only
first_under_sanitizer() {
  if [ "$sanitized" = 1 ]; then head -n 1; else cat; fi
}
sampled_note() { # suite name, what it runs under a sanitizer
  [ "$sanitized" = 1 ] && echo "NOTE $1: under ${TILEC_BUILD}, ${2:-one case of each kind (one_per_key)}; the plain build runs every case"
  return 0
}
