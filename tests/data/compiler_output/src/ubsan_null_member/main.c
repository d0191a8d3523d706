#include <stdio.h>

struct node { int value; struct node *next; };

int second(struct node *head) {
    return head->next->value;
}

int main(void) {
    struct node n = {1, NULL};
    printf("start\n");
    fflush(stdout);
    printf("%d\n", second(&n));
    return 0;
}
