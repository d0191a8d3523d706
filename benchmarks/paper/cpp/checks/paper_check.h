/* The hidden C tests' harness (placed beside each test program by its check, then removed): CHECK(cond) counts a
   check and prints a failure with the current test's name and the line; finish() prints the tally and gives main's
   exit code. Tests with a message of their own count through checks and failures directly. */
#ifndef PAPER_CHECK_H
#define PAPER_CHECK_H

#include <stdio.h>

__attribute__((unused)) static int checks, failures;
__attribute__((unused)) static const char *test = "";

#define CHECK(cond)                                                           \
    do {                                                                      \
        checks++;                                                             \
        if (!(cond)) {                                                        \
            failures++;                                                       \
            printf("FAIL %s (%s:%d): %s\n", test, __FILE__, __LINE__, #cond); \
        }                                                                     \
    } while (0)

__attribute__((unused)) static int finish(void) {
    if (failures) {
        printf("%d of %d checks failed\n", failures, checks);
        return 1;
    }
    printf("all %d checks passed\n", checks);
    return 0;
}

#endif
