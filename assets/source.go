package assets

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// silentHosts holds the hosts that took a connection and sent no response,
// and when: for silentFor their other files are not asked for, so a
// silent server costs a pull one wait, not one a file.
var silentHosts sync.Map

const silentFor = 5 * time.Minute

func silentHost(host string) bool {
	at, ok := silentHosts.Load(host)
	return ok && time.Since(at.(time.Time)) < silentFor
}

// client is p.Client, or http.DefaultClient, that follows redirects only
// to http and https: a redirect to file:// or ftp:// ends the source's
// attempts instead of failing each of them the same way.
func (p *Puller) client() *http.Client {
	c := *http.DefaultClient
	if p.Client != nil {
		c = *p.Client
	}
	follow := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return permanentError{fmt.Errorf("redirected to %s, which is not http or https", req.URL.Redacted())}
		}
		if follow != nil {
			return follow(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// permanentError ends the attempts on one source without retrying.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

var errStall = errors.New("stalled")

// sourceURL applies the mirror to a source.
func (p *Puller) sourceURL(src string) (string, error) {
	u, err := url.Parse(src)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("source %q: scheme %q is not supported for download", src, u.Scheme)
	}
	if p.Mirror == "" {
		return src, nil
	}
	mu, err := parseMirror(p.Mirror)
	if err != nil {
		return "", err
	}
	// The mirror's credentials, if any, go with each request (net/http
	// sends a URL's userinfo as Basic auth); a source's own would go to
	// a host they were not meant for.
	u.Scheme, u.Host, u.User = mu.Scheme, mu.Host, mu.User
	if prefix := strings.TrimSuffix(mu.Path, "/"); prefix != "" {
		u.Path = prefix + u.Path
		u.RawPath = ""
	}
	return u.String(), nil
}

// CheckMirror says why mirror cannot be a Puller's Mirror, or nil: where
// it is set (a flag, the app's settings), before any download.
func CheckMirror(mirror string) error {
	_, err := parseMirror(mirror)
	return err
}

// parseMirror is the mirror, if it is an http or https URL with a host.
func parseMirror(mirror string) (*url.URL, error) {
	mu, err := url.Parse(mirror)
	if err != nil || mu.Host == "" {
		return nil, fmt.Errorf("mirror %q: not a URL with a host", Redacted(mirror))
	}
	if mu.Scheme != "http" && mu.Scheme != "https" {
		return nil, fmt.Errorf("mirror %q: scheme %q is not supported for download (http or https)", Redacted(mirror), mu.Scheme)
	}
	return mu, nil
}

// Redacted is s, a URL, as a message or a log may show it: with its
// password, if it has one, masked. A mirror's credentials
// (http://user:secret@host/) are sent, never shown; journald keeps what
// a service prints.
func Redacted(s string) string {
	u, err := url.Parse(s)
	if err == nil && u.Opaque == "" {
		if _, ok := u.User.Password(); ok {
			return u.Redacted()
		}
		return s
	}
	// Not a URL the parser can take apart ("user:secret@host", a bad
	// escape in the password): all before its last @ may be secret.
	at := strings.LastIndex(s, "@")
	if at < 0 {
		return s
	}
	if scheme, _, ok := strings.Cut(s[:at], "://"); ok {
		return scheme + "://xxxxx" + s[at:]
	}
	return "xxxxx" + s[at:]
}

// notTLS says why err, a request's, means that its server does not speak
// TLS, which each try would find again (four of them over 30 s said only
// "EOF"): it answered the TLS handshake in plain text, as an http server
// does; or, the URL being a mirror's, it closed the connection at the
// handshake, as some plain servers do (from another source that is as
// likely a network that drops the connection, which a retry may pass).
// inHandshake says that the TLS handshake failed. "" if neither.
func (p *Puller) notTLS(err error, inHandshake bool) string {
	why := "answered the TLS handshake in plain text"
	var plain tls.RecordHeaderError
	switch {
	case errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &plain):
	case inHandshake && p.Mirror != "" && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		why = "closed the connection at the TLS handshake"
	default:
		return ""
	}
	msg := "the server does not speak TLS (https): it " + why
	if mu, err := parseMirror(p.Mirror); err == nil && mu.Scheme == "https" {
		mu.Scheme = "http"
		msg += "; if the mirror serves plain HTTP, give it as " + mu.Redacted()
	}
	return msg
}

// UnreachableError is the error of a pull that could connect to none of a
// file's sources: no such host, connection refused, no route. No source
// is retried then, since while the network is down no retry mends it.
type UnreachableError struct {
	Model, File string
	// Hosts say, source by source (each host once), why none could be
	// reached: "huggingface.co: no such host".
	Hosts []string
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("assets: model %s file %s: cannot connect to %s", e.Model, e.File, strings.Join(e.Hosts, "; "))
}

// unreachable says why err, a request's, never reached the server (or
// the proxy): "no-such-host.invalid: no such host", "127.0.0.1:9:
// connection refused"; or "" when it may have: a request that was sent,
// or whose answer was lost, can go through next time.
func unreachable(err error) string {
	var op *net.OpError
	if !errors.As(err, &op) || (op.Op != "dial" && op.Op != "proxyconnect") {
		return ""
	}
	var dns *net.DNSError
	if errors.As(op, &dns) {
		return dns.Name + ": " + dns.Err
	}
	// A proxy's error holds the dial that failed, with its address.
	for inner := op; errors.As(inner.Err, &inner); {
		op = inner
	}
	why := op.Err
	for inner := errors.Unwrap(why); inner != nil; inner = errors.Unwrap(why) {
		why = inner
	}
	if op.Addr == nil {
		return why.Error()
	}
	return op.Addr.String() + ": " + why.Error()
}

// unreachableHosts is why each source of errs, their errors, could not be
// connected to (each reason once); false if some source could, or might.
func unreachableHosts(errs []error) ([]string, bool) {
	var hosts []string
	for _, err := range errs {
		why := unreachable(err)
		if why == "" {
			return nil, false
		}
		if !slices.Contains(hosts, why) {
			hosts = append(hosts, why)
		}
	}
	return hosts, len(hosts) > 0
}

// download fills part from the sources in order, retrying each with
// backoff, resuming from what part already holds. A source that cannot
// be connected to is not retried; if none can, the error is an
// *UnreachableError.
func (p *Puller) download(ctx context.Context, m Model, f File, part string, size int64) error {
	var errs []error
	for _, src := range f.Sources {
		npm, isNPM, err := parseNPMSource(src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if isNPM {
			src = npm.tarballURL(p.npmRegistry())
		}
		u, err := p.sourceURL(src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		delay := p.backoff()
		for attempt := 0; ; attempt++ {
			if isNPM {
				err = p.fetchNPM(ctx, m, f, npm, u, part)
			} else {
				err = p.fetch(ctx, m, f, u, part, size)
			}
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, ctx.Err())
			}
			var perm permanentError
			if errors.As(err, &perm) || unreachable(err) != "" || attempt >= p.retries() {
				break
			}
			if p.Retrying != nil {
				p.Retrying(m.Name, f.Path, attempt+1, err, delay)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("assets: model %s file %s: %w", m.Name, f.Path, ctx.Err())
			case <-time.After(delay):
			}
			delay *= 2
		}
		errs = append(errs, err)
	}
	if hosts, ok := unreachableHosts(errs); ok {
		return &UnreachableError{Model: m.Name, File: f.Path, Hosts: hosts}
	}
	return fmt.Errorf("assets: model %s file %s: download failed: %w", m.Name, f.Path, errors.Join(errs...))
}
