package testenv

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fault is what a FaultProxy does to a request a rule matches.
type Fault int

const (
	// Reset closes the connection before the request reaches the store.
	Reset Fault = iota + 1
	// Unavailable answers 503 SlowDown without forwarding.
	Unavailable
	// InternalError answers 500 without forwarding.
	InternalError
	// Delay waits Rule.Wait, then forwards.
	Delay
	// Truncate forwards, then sends the status, headers and half of the
	// body, and closes the connection (an answer with no body is only cut
	// off after its headers).
	Truncate
	// DropResponse forwards, lets the store apply the request, then closes
	// the connection without answering: the client cannot know it landed.
	DropResponse
)

func (f Fault) String() string {
	return map[Fault]string{Reset: "reset", Unavailable: "503", InternalError: "500", Delay: "delay",
		Truncate: "truncate", DropResponse: "drop-response"}[f]
}

// Op names an S3 operation by its request, for rules.
type Op string

const (
	OpAny      Op = ""
	OpGet      Op = "GetObject"
	OpHead     Op = "HeadObject"
	OpPut      Op = "PutObject"
	OpList     Op = "ListObjects"
	OpDelete   Op = "DeleteObject"
	OpCreate   Op = "CreateMultipartUpload"
	OpPart     Op = "UploadPart"
	OpComplete Op = "CompleteMultipartUpload"
	OpAbort    Op = "AbortMultipartUpload"
	OpParts    Op = "ListParts"
	OpUploads  Op = "ListMultipartUploads"
	OpDeletes  Op = "DeleteObjects"
)

// opOf names the operation of a path-style S3 request.
func opOf(r *http.Request) Op {
	q := r.URL.Query()
	key := strings.Count(strings.Trim(r.URL.Path, "/"), "/") > 0
	switch r.Method {
	case http.MethodGet:
		switch {
		case !key && q.Has("uploads"):
			return OpUploads
		case !key:
			return OpList
		case q.Has("uploadId"):
			return OpParts
		}
		return OpGet
	case http.MethodHead:
		return OpHead
	case http.MethodPut:
		if q.Has("uploadId") {
			return OpPart
		}
		return OpPut
	case http.MethodPost:
		if q.Has("delete") {
			return OpDeletes
		}
		if q.Has("uploads") {
			return OpCreate
		}
		if q.Has("uploadId") {
			return OpComplete
		}
	case http.MethodDelete:
		if q.Has("uploadId") {
			return OpAbort
		}
		return OpDelete
	}
	return Op(r.Method)
}

// Rule says which requests get a fault: those of Op (any when empty) whose
// path holds KeyPart, the Nth of them (counting from 1) when Nth is set,
// else each with Probability, drawn from the proxy's seeded source.
type Rule struct {
	Op          Op
	KeyPart     string
	Nth         int
	Probability float64
	Fault       Fault
	Wait        time.Duration // for Delay
	seen        int
}

// FaultProxy is a reverse proxy on a loopback port in front of an S3
// server that injects faults by rule: what a flaky network and a busy
// store do to a client. Requests keep their Host header, so that their
// signatures still hold.
type FaultProxy struct {
	Endpoint string
	mu       sync.Mutex
	rules    []*Rule
	rng      *rand.Rand
	log      []string
}

// NewFaultProxy starts a proxy in front of target (an http:// endpoint)
// with rules and a fixed seed, until the test ends.
func NewFaultProxy(t testing.TB, target string, seed uint64, rules ...Rule) *FaultProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &FaultProxy{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	for i := range rules {
		p.rules = append(p.rules, &rules[i])
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Host = r.In.Host
	}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.serve(w, r, rp)
	}))
	t.Cleanup(srv.Close)
	p.Endpoint = srv.URL
	return p
}

// Injected lists the faults injected so far, as "fault op path".
func (p *FaultProxy) Injected() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// SetRules replaces the rules.
func (p *FaultProxy) SetRules(rules ...Rule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = nil
	for i := range rules {
		p.rules = append(p.rules, &rules[i])
	}
}

// fault picks the fault for a request, if any rule matches.
func (p *FaultProxy) fault(r *http.Request) (Fault, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	op := opOf(r)
	for _, rule := range p.rules {
		if rule.Op != OpAny && rule.Op != op || !strings.Contains(r.URL.Path, rule.KeyPart) {
			continue
		}
		rule.seen++
		hit := rule.Nth > 0 && rule.seen == rule.Nth || rule.Nth == 0 && p.rng.Float64() < rule.Probability
		if hit {
			p.log = append(p.log, rule.Fault.String()+" "+string(op)+" "+r.URL.Path)
			return rule.Fault, rule.Wait
		}
	}
	return 0, 0
}

func (p *FaultProxy) serve(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy) {
	fault, wait := p.fault(r)
	switch fault {
	case Reset:
		_, _ = io.Copy(io.Discard, r.Body)
		hangUp(w)
	case Unavailable:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
	case InternalError:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
	case Delay:
		time.Sleep(wait)
		rp.ServeHTTP(w, r)
	case Truncate, DropResponse:
		rec := httptest.NewRecorder()
		rp.ServeHTTP(rec, r)
		if fault == DropResponse {
			hangUp(w)
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		body := rec.Body.Bytes()
		w.WriteHeader(rec.Code)
		_, _ = io.Copy(w, bytes.NewReader(body[:len(body)/2]))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		hangUp(w)
	default:
		rp.ServeHTTP(w, r)
	}
}

// hangUp closes the client's connection at once, with a reset where it can.
func hangUp(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
