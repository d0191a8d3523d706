/* Hidden tests for c_int_vector: built with intvec.c under ASan, UBSan and LeakSanitizer. */
#include <stdio.h>

#include "paper_check.h"
#include "intvec.h"

/* Whether v holds exactly these values, in order. */
static int holds(const IntVec *v, const int *values, size_t n) {
    if (v->size != n) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (iv_get(v, i) != values[i]) {
            return 0;
        }
    }
    return 1;
}

static void test_init(void) {
    test = "init";
    IntVec v;
    iv_init(&v);
    CHECK(v.data == NULL && v.size == 0 && v.capacity == 0);
    iv_free(&v);
    CHECK(v.data == NULL && v.size == 0 && v.capacity == 0);
}

static void test_growth(void) {
    test = "push and growth";
    IntVec v;
    iv_init(&v);
    CHECK(iv_push(&v, 10) == 0);
    CHECK(v.size == 1 && v.capacity == 4);
    for (int i = 1; i < 4; i++) {
        iv_push(&v, 10 + i);
    }
    CHECK(v.size == 4 && v.capacity == 4);
    CHECK(iv_push(&v, 14) == 0);
    CHECK(v.size == 5 && v.capacity == 8);
    for (int i = 5; i < 1000; i++) {
        iv_push(&v, 10 + i);
    }
    CHECK(v.size == 1000 && v.capacity == 1024);
    int ok = 1;
    for (size_t i = 0; i < 1000; i++) {
        ok = ok && iv_get(&v, i) == 10 + (int)i;
    }
    CHECK(ok);
    iv_free(&v);
    CHECK(v.data == NULL && v.size == 0 && v.capacity == 0);
}

static void test_pop(void) {
    test = "pop";
    IntVec v;
    iv_init(&v);
    int out = 77;
    CHECK(iv_pop(&v, &out) == -1 && out == 77);
    iv_push(&v, 1);
    iv_push(&v, 2);
    CHECK(iv_pop(&v, &out) == 0 && out == 2 && v.size == 1);
    CHECK(iv_pop(&v, &out) == 0 && out == 1 && v.size == 0);
    CHECK(iv_pop(&v, &out) == -1);
    CHECK(v.capacity == 4);
    CHECK(iv_push(&v, 3) == 0 && v.size == 1 && iv_get(&v, 0) == 3);
    iv_free(&v);
}

static void test_insert(void) {
    test = "insert";
    IntVec v;
    iv_init(&v);
    CHECK(iv_insert(&v, 1, 5) == -1 && v.size == 0);
    CHECK(iv_insert(&v, 0, 5) == 0);          /* [5] */
    CHECK(iv_insert(&v, 0, 3) == 0);          /* [3 5] */
    CHECK(iv_insert(&v, 2, 9) == 0);          /* [3 5 9] at the end */
    CHECK(iv_insert(&v, 1, 4) == 0);          /* [3 4 5 9] full */
    CHECK(v.capacity == 4);
    CHECK(iv_insert(&v, 3, 7) == 0);          /* [3 4 5 7 9] grows */
    const int want[] = {3, 4, 5, 7, 9};
    CHECK(holds(&v, want, 5) && v.capacity == 8);
    CHECK(iv_insert(&v, 6, 1) == -1);
    CHECK(holds(&v, want, 5));
    iv_free(&v);
}

static void test_remove_at(void) {
    test = "remove_at";
    IntVec v;
    iv_init(&v);
    int out = 0;
    CHECK(iv_remove_at(&v, 0, &out) == -1);
    for (int i = 1; i <= 6; i++) {
        iv_push(&v, i);                       /* [1 2 3 4 5 6] */
    }
    CHECK(iv_remove_at(&v, 0, &out) == 0 && out == 1);
    CHECK(iv_remove_at(&v, 4, &out) == 0 && out == 6);
    CHECK(iv_remove_at(&v, 1, &out) == 0 && out == 3);
    const int want[] = {2, 4, 5};
    CHECK(holds(&v, want, 3) && v.capacity == 8);
    CHECK(iv_remove_at(&v, 3, &out) == -1 && out == 3);
    CHECK(holds(&v, want, 3));
    iv_free(&v);
}

int main(void) {
    test_init();
    test_growth();
    test_pop();
    test_insert();
    test_remove_at();
    return finish();
}
