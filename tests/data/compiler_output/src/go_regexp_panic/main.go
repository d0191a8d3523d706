package main

import (
	"fmt"
	"regexp"
)

func main() {
	fmt.Println("compiling")
	re := regexp.MustCompile("(ab")
	fmt.Println(re.MatchString("ab"))
}
