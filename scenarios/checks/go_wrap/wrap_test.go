package wrap

import (
	"reflect"
	"testing"
)

func TestEmpty(t *testing.T) {
	if got := Wrap("", 10); len(got) != 0 {
		t.Errorf("Wrap(\"\", 10) = %q, want no lines", got)
	}
}

func TestFits(t *testing.T) {
	if got, want := Wrap("hello world", 11), []string{"hello world"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Wrap(\"hello world\", 11) = %q, want %q", got, want)
	}
}

func TestBreaks(t *testing.T) {
	got := Wrap("the quick brown fox jumps over the lazy dog", 10)
	want := []string{"the quick", "brown fox", "jumps over", "the lazy", "dog"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Wrap(..., 10) = %q, want %q", got, want)
	}
}

func TestSpaces(t *testing.T) {
	if got, want := Wrap("  a   b  ", 3), []string{"a b"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Wrap(\"  a   b  \", 3) = %q, want %q", got, want)
	}
}

func TestLongWord(t *testing.T) {
	got := Wrap("a extraordinarily b", 5)
	want := []string{"a", "extraordinarily", "b"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Wrap(\"a extraordinarily b\", 5) = %q, want %q", got, want)
	}
}
