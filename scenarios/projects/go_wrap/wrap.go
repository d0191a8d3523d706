package wrap

// Wrap breaks text into lines of at most width characters, breaking only at spaces. Runs of spaces between words
// count as one; a word longer than width stands alone on its line. Empty text gives no lines.
func Wrap(text string, width int) []string {
	return nil
}
