/* Hidden tests for c_str_trim: built with strutil.c under ASan and UBSan; each string is a heap copy of exactly
   its size, so a read or write past its '\0' is reported. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paper_check.h"
#include "strutil.h"

static void trimmed(const char *input, const char *want, int line) {
    char *s = strdup(input);
    char *ret = str_trim(s);
    checks++;
    if (ret != s || strcmp(s, want) != 0) {
        failures++;
        printf("FAIL str_trim (test_strutil.c:%d): \"%s\" became \"%s\"%s, expected \"%s\"\n", line, input, s,
               ret != s ? " and the returned pointer is not s" : "", want);
    }
    free(s);
}

static void reversed(const char *input, const char *want, int line) {
    char *s = strdup(input);
    reverse_words(s);
    checks++;
    if (strcmp(s, want) != 0) {
        failures++;
        printf("FAIL reverse_words (test_strutil.c:%d): \"%s\" became \"%s\", expected \"%s\"\n", line, input, s,
               want);
    }
    free(s);
}

int main(void) {
    trimmed("  hello world \n", "hello world", __LINE__);
    trimmed("hello", "hello", __LINE__);
    trimmed("", "", __LINE__);
    trimmed("   ", "", __LINE__);
    trimmed("\t\n x \r\n", "x", __LINE__);
    trimmed("  inner   spaces stay  ", "inner   spaces stay", __LINE__);
    trimmed("trailing only   ", "trailing only", __LINE__);
    trimmed("\t\tleading only", "leading only", __LINE__);

    reversed("the quick brown fox", "fox brown quick the", __LINE__);
    reversed("  the quick  brown fox ", "fox brown quick the", __LINE__);
    reversed("one", "one", __LINE__);
    reversed("  one  ", "one", __LINE__);
    reversed("", "", __LINE__);
    reversed("   ", "", __LINE__);
    reversed("a b", "b a", __LINE__);
    reversed("hello, world!", "world! hello,", __LINE__);
    reversed("ab cde f", "f cde ab", __LINE__);

    return finish();
}
