/* Hidden tests for c_parse_int: built with parse.c under ASan and UBSan. */
#include <stdio.h>
#include <stdlib.h>

#include "paper_check.h"
#include "parse.h"

static const char *NAMES[] = {"PARSE_OK", "PARSE_EMPTY", "PARSE_INVALID", "PARSE_RANGE"};

static const char *name(parse_status status) {
    return (unsigned)status < 4 ? NAMES[status] : "(not a parse_status)";
}

/* parse_int(text) gives want; on PARSE_OK *out is value, on an error *out is left alone. */
static void one(const char *text, parse_status want, int value, int line) {
    int out = -12345;
    parse_status got = parse_int(text, &out);
    int ok = got == want && (want == PARSE_OK ? out == value : out == -12345);
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL parse_int (test_parse.c:%d): \"%s\" gave %s, *out %d; expected %s", line,
               text ? text : "(NULL)", name(got), out, name(want));
        if (want == PARSE_OK) {
            printf(", *out %d\n", value);
        } else {
            printf(", *out left alone (-12345)\n");
        }
    }
}

/* parse_int_list(text, values, max) gives want with *count n and the first n values; values is a heap array of
   exactly max ints (at least one), so a write past max is reported. */
static void list(const char *text, size_t max, parse_status want, size_t n, const int *expected, int line) {
    int *values = malloc((max ? max : 1) * sizeof *values);
    size_t count = 999;
    parse_status got = parse_int_list(text, values, max, &count);
    int ok = got == want && count == n;
    for (size_t i = 0; ok && i < n; i++) {
        ok = values[i] == expected[i];
    }
    checks++;
    if (!ok) {
        failures++;
        printf("FAIL parse_int_list (test_parse.c:%d): \"%s\" with max %zu gave %s, *count %zu; expected %s, "
               "*count %zu (or a value differs)\n", line, text ? text : "(NULL)", max, name(got), count, name(want),
               n);
    }
    free(values);
}

int main(void) {
    one("42", PARSE_OK, 42, __LINE__);
    one("  42\n", PARSE_OK, 42, __LINE__);
    one("+7", PARSE_OK, 7, __LINE__);
    one("-15", PARSE_OK, -15, __LINE__);
    one("-0", PARSE_OK, 0, __LINE__);
    one("007", PARSE_OK, 7, __LINE__);
    one("\t-3 ", PARSE_OK, -3, __LINE__);
    one("2147483647", PARSE_OK, 2147483647, __LINE__);
    one("-2147483648", PARSE_OK, -2147483647 - 1, __LINE__);
    one(NULL, PARSE_EMPTY, 0, __LINE__);
    one("", PARSE_EMPTY, 0, __LINE__);
    one("   \n", PARSE_EMPTY, 0, __LINE__);
    one("abc", PARSE_INVALID, 0, __LINE__);
    one("12abc", PARSE_INVALID, 0, __LINE__);
    one("1 2", PARSE_INVALID, 0, __LINE__);
    one("-", PARSE_INVALID, 0, __LINE__);
    one("+", PARSE_INVALID, 0, __LINE__);
    one("- 5", PARSE_INVALID, 0, __LINE__);
    one("0x10", PARSE_INVALID, 0, __LINE__);
    one("4.5", PARSE_INVALID, 0, __LINE__);
    one("2147483648", PARSE_RANGE, 0, __LINE__);
    one("-2147483649", PARSE_RANGE, 0, __LINE__);
    one("99999999999999999999999", PARSE_RANGE, 0, __LINE__);
    one("  -99999999999999999999999 ", PARSE_RANGE, 0, __LINE__);

    const int v123[] = {1, 2, 3};
    list("1,2,3", 3, PARSE_OK, 3, v123, __LINE__);
    list(" 1, 2 ,3\n", 5, PARSE_OK, 3, v123, __LINE__);
    const int v1[] = {-40};
    list("-40", 1, PARSE_OK, 1, v1, __LINE__);
    list(NULL, 3, PARSE_EMPTY, 0, v123, __LINE__);
    list("", 3, PARSE_EMPTY, 0, v123, __LINE__);
    list("  ", 3, PARSE_EMPTY, 0, v123, __LINE__);
    list("1,2,x", 5, PARSE_INVALID, 2, v123, __LINE__);
    list("1,,2", 5, PARSE_INVALID, 1, v123, __LINE__);
    list("1,", 5, PARSE_INVALID, 1, v123, __LINE__);
    list(",1", 5, PARSE_INVALID, 0, v123, __LINE__);
    list("1, ,2", 5, PARSE_INVALID, 1, v123, __LINE__);
    list("1,2,3,4", 3, PARSE_RANGE, 3, v123, __LINE__);
    list("1,2,3", 2, PARSE_RANGE, 2, v123, __LINE__);
    list("1,99999999999", 5, PARSE_RANGE, 1, v123, __LINE__);

    return finish();
}
