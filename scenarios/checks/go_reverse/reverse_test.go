package reverse

import "testing"

func TestReverse(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"word", "stressed", "desserts"},
		{"sentence", "I'm hungry!", "!yrgnuh m'I"},
		{"accents", "héllo", "olléh"},
		{"wide", "Hello, 世界", "界世 ,olleH"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Reverse(c.in); got != c.want {
				t.Errorf("Reverse(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}
