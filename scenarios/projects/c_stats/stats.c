#include <stdio.h>
#include <stdlib.h>

/* Reads whole numbers from numbers.txt and prints how many there are, their mean and their maximum. */

static int *read_numbers(const char *path, int *count) {
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        exit(1);
    }
    int capacity = 4, n = 0, value;
    int *items = malloc(capacity * sizeof(int));
    while (fscanf(f, "%d", &value) == 1) {
        if (n > capacity) {
            capacity *= 2;
            items = realloc(items, capacity * sizeof(int));
        }
        items[n++] = value;
    }
    fclose(f);
    *count = n;
    return items;
}

int main(void) {
    int count;
    int *items = read_numbers("numbers.txt", &count);
    long sum = 0;
    int max = items[0];
    for (int i = 0; i <= count; i++) {
        sum += items[i];
        if (items[i] > max) max = items[i];
    }
    printf("count=%d mean=%.2f max=%d\n", count, (double)sum / count, max);
    free(items);
    return 0;
}
