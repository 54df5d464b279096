package fynelocale

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSetLanguage(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		lcAll, lcMessages, lang, was string
		want                         string
	}{
		{"C.UTF-8", "", "", "C.UTF-8", "", "en"},
		{"C.utf8", "", "", "C.utf8", "", "en"},
		{"POSIX with a modifier", "", "", "POSIX@euro", "", "en"},
		{"LC_ALL first", "C.UTF-8", "", "zh_CN.UTF-8", "", "en"},
		{"LC_MESSAGES before LANG", "", "zh_CN.UTF-8", "C.UTF-8", "", ""},
		{"a language", "", "", "zh_CN.UTF-8", "", ""},
		{"plain C, read as no language", "", "", "C", "", ""},
		{"unset", "", "", "", "", ""},
		{"LANGUAGE kept", "", "", "C.UTF-8", "fr", "fr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LC_ALL", tc.lcAll)
			t.Setenv("LC_MESSAGES", tc.lcMessages)
			t.Setenv("LANG", tc.lang)
			t.Setenv("LANGUAGE", tc.was)
			setLanguage()
			assert.Equal(t, tc.want, os.Getenv("LANGUAGE"))
		})
	}
}
