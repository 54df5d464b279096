// Package fynelocale, imported before fyne, gives fyne a language it can
// read where the locale is C.UTF-8, as in containers and services: fyne
// (through github.com/jeandeaual/go-locale) takes its "C" for a language
// tag, fails to parse it, and logs "Fyne error: Error parsing user locale
// C" as its lang package initializes, before main can do anything. Fyne has
// no setting for the language (no environment variable, no API before that
// point); what go-locale reads under such a locale is LANGUAGE, so that is
// set to English, what a C locale means.
//
// The package must import nothing but os and strings: Go initializes, of
// the packages whose imports are ready, the first by import path, so this
// one comes before golang.org/x/text and text/template, which need those
// two and which fyne's lang needs.
package fynelocale

import (
	"os"
	"strings"
)

func init() { setLanguage() }

// setLanguage sets LANGUAGE to English where the locale is C or POSIX
// with a codeset or modifier (C.UTF-8) and LANGUAGE is not set already.
// A plain C or POSIX go-locale reads as no language, without an error.
func setLanguage() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	// The locale of messages, as go-locale and gettext look for it.
	for _, env := range [...]string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if loc := os.Getenv(env); loc != "" {
			if i := strings.IndexAny(loc, ".@"); i > 0 && (loc[:i] == "C" || loc[:i] == "POSIX") {
				os.Setenv("LANGUAGE", "en")
			}
			return
		}
	}
}
