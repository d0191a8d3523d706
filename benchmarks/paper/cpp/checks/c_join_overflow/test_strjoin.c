/* Hidden tests for c_join_overflow: built with strjoin.c under ASan and UBSan; every buffer is exactly the size
   passed, on the heap, so a byte past it is a reported overflow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paper_check.h"
#include "strjoin.h"

/* str_join's result is want (printed when it is not); frees it. */
static void joined(char *got, const char *want, int line) {
    checks++;
    if (got == NULL || strcmp(got, want) != 0) {
        failures++;
        printf("FAIL %s (test_strjoin.c:%d): str_join gave \"%s\", expected \"%s\"\n", test, line,
               got ? got : "(NULL)", want);
    }
    free(got);
}

static void test_join(void) {
    test = "str_join";
    const char *abc[] = {"a", "b", "c"};
    joined(str_join(abc, 3, ", "), "a, b, c", __LINE__);
    joined(str_join(abc, 3, ""), "abc", __LINE__);
    joined(str_join(abc, 1, "-"), "a", __LINE__);
    joined(str_join(abc, 0, "-"), "", __LINE__);
    const char *words[] = {"usr", "local", "bin"};
    joined(str_join(words, 3, "/"), "usr/local/bin", __LINE__);
    const char *empties[] = {"", "", ""};
    joined(str_join(empties, 3, ","), ",,", __LINE__);
    joined(str_join(empties, 1, ","), "", __LINE__);
}

/* str_copy into a heap buffer of exactly size bytes (size 0: a one-byte buffer it must not touch). */
static void copy(const char *src, size_t size, const char *want, size_t want_ret, int line) {
    char *dst = malloc(size ? size : 1);
    if (size == 0) {
        dst[0] = '#';
    }
    size_t ret = str_copy(dst, src, size);
    checks++;
    int ok = ret == want_ret && (size == 0 ? dst[0] == '#' : strcmp(dst, want) == 0);
    if (!ok) {
        failures++;
        printf("FAIL %s (test_strjoin.c:%d): str_copy(dst, \"%s\", %zu) gave \"%s\" and %zu, expected \"%s\" "
               "and %zu\n", test, line, src, size, size ? dst : "(untouched)", ret, want, want_ret);
    }
    free(dst);
}

static void test_copy(void) {
    test = "str_copy";
    copy("hello", 10, "hello", 5, __LINE__);
    copy("hello", 6, "hello", 5, __LINE__);
    copy("hello", 5, "hell", 5, __LINE__);
    copy("hello", 3, "he", 5, __LINE__);
    copy("hello", 1, "", 5, __LINE__);
    copy("hello", 0, "", 5, __LINE__);
    copy("", 4, "", 0, __LINE__);
    copy("a longer sentence than the buffer", 8, "a longe", 33, __LINE__);
}

int main(void) {
    test_join();
    test_copy();
    return finish();
}
