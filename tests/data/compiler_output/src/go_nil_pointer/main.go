package main

import "fmt"

type Node struct {
	Value int
	Next  *Node
}

func main() {
	n := &Node{Value: 1}
	fmt.Println("first", n.Value)
	fmt.Println("second", n.Next.Value)
}
