package main

import "fmt"

func main() {
	name := "go"
	fmt.Printf("%d\n", name)
}
