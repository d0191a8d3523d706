package main

import (
	"fmt"
	"os"
)

func main() {
	total := 0
	for i := 0; i < 3; i++ {
		count += i
	}
	fmt.Println(totl)
}
