/* harness.h: a minimal unit-test harness. Each test binary prints "PASS name" or
 * "FAIL name: file:line: what" per test and returns nonzero when any failed; tests/run.sh
 * counts the lines. */
#ifndef TILEC_TEST_HARNESS_H
#define TILEC_TEST_HARNESS_H
#include <stdio.h>
#include <string.h>

static int tc_t_passed, tc_t_failed, tc_t_cur_failed;
static const char *tc_t_cur;

static void tc_t_fail(const char *file, int line, const char *what) {
  if (!tc_t_cur_failed) printf("FAIL %s: %s:%d: %s\n", tc_t_cur, file, line, what);
  tc_t_cur_failed = 1;
}

#define TEST(name) static void name(void)
#define CHECK(cond)                                   \
  do {                                                \
    if (!(cond)) {                                    \
      tc_t_fail(__FILE__, __LINE__, #cond);           \
      return;                                         \
    }                                                 \
  } while (0)
/* CHECK without returning, for loops over many cases (the first failure is reported). */
#define EXPECT(cond)                                  \
  do {                                                \
    if (!(cond)) tc_t_fail(__FILE__, __LINE__, #cond); \
  } while (0)
#define CHECK_STR(a, b)                                                                      \
  do {                                                                                       \
    const char *tc_a_ = (a), *tc_b_ = (b);                                                   \
    if (!tc_a_ || !tc_b_ || strcmp(tc_a_, tc_b_) != 0) {                                     \
      printf("  got:      %s\n  expected: %s\n", tc_a_ ? tc_a_ : "(null)", tc_b_ ? tc_b_ : "(null)"); \
      tc_t_fail(__FILE__, __LINE__, #a " == " #b);                                           \
      return;                                                                                \
    }                                                                                        \
  } while (0)
#define CHECK_INT(a, b)                                                                       \
  do {                                                                                        \
    long long tc_a_ = (long long)(a), tc_b_ = (long long)(b);                                 \
    if (tc_a_ != tc_b_) {                                                                     \
      printf("  got %lld, expected %lld\n", tc_a_, tc_b_);                                    \
      tc_t_fail(__FILE__, __LINE__, #a " == " #b);                                            \
      return;                                                                                 \
    }                                                                                         \
  } while (0)

#define RUN(name)                                   \
  do {                                              \
    tc_t_cur = #name;                               \
    tc_t_cur_failed = 0;                            \
    name();                                         \
    if (tc_t_cur_failed) tc_t_failed++;             \
    else {                                          \
      tc_t_passed++;                                \
      printf("PASS %s\n", #name);                   \
    }                                               \
    fflush(stdout);                                 \
  } while (0)

#define TEST_MAIN_END() return tc_t_failed ? 1 : 0
#endif
