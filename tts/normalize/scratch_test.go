package normalize

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

func TestScratch(t *testing.T) {
	f, err := os.Open(os.Getenv("SCRATCH"))
	if err != nil {
		t.Skip()
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		in := sc.Text()
		fmt.Printf("%-40q → %q\n", in, Text(in))
	}
}
