package main

import "fmt"

func main() {
	ch := make(chan int)
	fmt.Println("waiting")
	ch <- 1
	fmt.Println(<-ch)
}
