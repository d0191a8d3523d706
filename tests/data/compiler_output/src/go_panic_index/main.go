package main

import "fmt"

func pick(xs []int, i int) int {
	return xs[i]
}

func main() {
	xs := []int{10, 20, 30}
	for i := 0; i < 6; i++ {
		fmt.Println("pick", i, pick(xs, i))
	}
}
