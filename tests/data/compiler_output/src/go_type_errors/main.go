package main

import "fmt"

func half(n int) int { return n / 2 }

func main() {
	var s string = 5
	x := half("four")
	y := half(3, 4)
	var z int = "z"
	fmt.Println(s, x, y, z)
	return 1
}
