/* Hidden tests for c_list_leak: built with list.c under ASan, UBSan and LeakSanitizer. */
#include <stdio.h>

#include "paper_check.h"
#include "list.h"

/* Whether the list holds exactly these values, in order, and its length says so. */
static int holds(const List *list, const int *values, size_t n) {
    size_t i = 0;
    for (const Node *node = list->head; node != NULL; node = node->next, i++) {
        if (i >= n || node->value != values[i]) {
            return 0;
        }
    }
    return i == n && list->length == n;
}

static void fill(List *list, const int *values, size_t n) {
    list_init(list);
    for (size_t i = 0; i < n; i++) {
        list_push_back(list, values[i]);
    }
}

static void test_init_and_push(void) {
    test = "init and push_back";
    List list;
    list_init(&list);
    CHECK(list.head == NULL && list.length == 0);
    CHECK(list_push_back(&list, 7) == 0);
    CHECK(list_push_back(&list, 8) == 0);
    const int want[] = {7, 8};
    CHECK(holds(&list, want, 2));
    list_free(&list);
}

static void test_remove_middle(void) {
    test = "remove from the middle";
    List list;
    const int values[] = {1, 2, 3, 4, 5};
    fill(&list, values, 5);
    CHECK(list_remove(&list, 3) == 1);
    const int want[] = {1, 2, 4, 5};
    CHECK(holds(&list, want, 4));
    list_free(&list);
}

static void test_remove_head_and_tail(void) {
    test = "remove the head and the tail";
    List list;
    const int values[] = {9, 1, 2, 9};
    fill(&list, values, 4);
    CHECK(list_remove(&list, 9) == 2);
    const int want[] = {1, 2};
    CHECK(holds(&list, want, 2));
    list_free(&list);
}

static void test_remove_runs(void) {
    test = "remove runs of the same value";
    List list;
    const int values[] = {2, 2, 2, 5, 2, 2, 6, 2};
    fill(&list, values, 8);
    CHECK(list_remove(&list, 2) == 6);
    const int want[] = {5, 6};
    CHECK(holds(&list, want, 2));
    CHECK(list_remove(&list, 5) == 1);
    CHECK(list_remove(&list, 6) == 1);
    CHECK(list.head == NULL && list.length == 0);
    list_free(&list);
}

static void test_remove_missing(void) {
    test = "remove a value that is not there";
    List list;
    list_init(&list);
    CHECK(list_remove(&list, 4) == 0);
    const int values[] = {1, 3};
    fill(&list, values, 2);
    CHECK(list_remove(&list, 4) == 0);
    CHECK(holds(&list, values, 2));
    list_free(&list);
}

static void test_free(void) {
    test = "free";
    List list;
    const int values[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    fill(&list, values, 10);
    list_free(&list);
    CHECK(list.head == NULL && list.length == 0);
    list_free(&list); /* an empty list too */
    CHECK(list.head == NULL && list.length == 0);
    fill(&list, values, 1);
    list_free(&list); /* a list of one node */
    CHECK(list.head == NULL && list.length == 0);
    CHECK(list_push_back(&list, 3) == 0); /* usable again */
    const int want[] = {3};
    CHECK(holds(&list, want, 1));
    list_free(&list);
}

int main(void) {
    test_init_and_push();
    test_remove_middle();
    test_remove_head_and_tail();
    test_remove_runs();
    test_remove_missing();
    test_free();
    return finish();
}
