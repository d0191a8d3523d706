package main

import "fmt"

func count(words []string) map[string]int {
	var m map[string]int
	for _, w := range words {
		m[w]++
	}
	return m
}

func main() {
	fmt.Println("counting")
	fmt.Println(count([]string{"a", "b", "a"}))
}
