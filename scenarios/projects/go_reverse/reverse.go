package reverse

// Reverse returns s with its characters in reverse order.
func Reverse(s string) string {
	return s
}
