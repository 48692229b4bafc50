// Package cdp drives a headless Chromium for tests, over the Chrome
// DevTools Protocol: it starts the browser, opens a page, evaluates
// JavaScript in it and takes screenshots. It speaks the protocol's JSON
// messages over a WebSocket of its own (RFC 6455, the client side: masked
// text frames out, unmasked frames in), so that tests need no module
// beyond the standard library.
package cdp

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Flags are the command line flags the browser starts with: headless,
// without a sandbox (tests run as root in CI), and without the background
// connections that a machine without internet access refuses.
var Flags = []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync", "--remote-debugging-port=0"}

// Find returns the path of a Chromium on this machine, "" for none. The
// environment variable CHROMIUM names one explicitly.
func Find() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Browser is a running Chromium with one page.
type Browser struct {
	cmd     *exec.Cmd
	conn    *wsConn
	session string

	mu      sync.Mutex
	next    int64
	waiting map[int64]chan message
	readErr error
	done    chan struct{}
}

type message struct {
	ID     int64           `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params any             `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

var listening = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// Start starts the browser at path with a fresh profile in dir and opens a
// blank page of width x height pixels.
func Start(ctx context.Context, path, dir string, width, height int) (*Browser, error) {
	args := append(append([]string(nil), Flags...), "--user-data-dir="+dir, fmt.Sprintf("--window-size=%d,%d", width, height), "about:blank")
	cmd := exec.CommandContext(ctx, path, args...)
	ownGroup(cmd)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	b := &Browser{cmd: cmd, waiting: map[int64]chan message{}, done: make(chan struct{})}
	found := make(chan string, 1)
	var head strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			} else if head.Len() < 4096 {
				head.WriteString(sc.Text() + "\n")
			}
		}
	}()
	var ws string
	select {
	case ws = <-found:
	case <-time.After(30 * time.Second):
		b.Close()
		return nil, fmt.Errorf("%s did not say where DevTools listen within 30s", path)
	}
	if b.conn, err = dial(ws); err != nil {
		b.Close()
		return nil, err
	}
	go b.read()
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.call("", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		b.Close()
		return nil, err
	}
	var attached struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
		b.Close()
		return nil, err
	}
	b.session = attached.SessionID
	if err := b.Call("Emulation.setDeviceMetricsOverride", map[string]any{"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}, nil); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close stops the browser.
func (b *Browser) Close() {
	if b.conn != nil {
		b.conn.Close()
	}
	if b.cmd.Process != nil {
		killGroup(b.cmd)
	}
	b.cmd.Wait()
}

// Call sends a command to the page and decodes its result into result
// (when not nil).
func (b *Browser) Call(method string, params, result any) error {
	return b.call(b.session, method, params, result)
}

func (b *Browser) call(session, method string, params, result any) error {
	b.mu.Lock()
	if b.readErr != nil {
		b.mu.Unlock()
		return b.readErr
	}
	b.next++
	id := b.next
	ch := make(chan message, 1)
	b.waiting[id] = ch
	b.mu.Unlock()
	data, err := json.Marshal(message{ID: id, Method: method, Params: params, SessionID: session})
	if err != nil {
		return err
	}
	if err := b.conn.WriteText(data); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-b.done:
		return fmt.Errorf("%s: %w", method, b.readErr)
	case <-time.After(60 * time.Second):
		return fmt.Errorf("%s: no answer within 60s", method)
	}
}

func (b *Browser) read() {
	for {
		data, err := b.conn.ReadMessage()
		if err != nil {
			b.mu.Lock()
			b.readErr = fmt.Errorf("devtools connection: %w", err)
			b.mu.Unlock()
			close(b.done)
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil || m.ID == 0 {
			continue // an event
		}
		b.mu.Lock()
		ch := b.waiting[m.ID]
		delete(b.waiting, m.ID)
		b.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// Navigate loads url in the page.
func (b *Browser) Navigate(url string) error {
	return b.Call("Page.navigate", map[string]any{"url": url}, nil)
}

// Eval evaluates a JavaScript expression in the page (awaiting a promise)
// and decodes its value, as JSON, into v.
func (b *Browser) Eval(expr string, v any) error {
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		Exception *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := b.Call("Runtime.evaluate", map[string]any{"expression": expr, "returnByValue": true, "awaitPromise": true}, &res); err != nil {
		return err
	}
	if res.Exception != nil {
		return fmt.Errorf("%s: %s %s", expr, res.Exception.Text, res.Exception.Exception.Description)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(res.Result.Value, v)
}

// Screenshot returns a PNG of the page as it is shown.
func (b *Browser) Screenshot() ([]byte, error) {
	var res struct {
		Data string `json:"data"`
	}
	if err := b.Call("Page.captureScreenshot", map[string]any{"format": "png"}, &res); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(res.Data)
}

// wsConn is the client side of a WebSocket.
type wsConn struct {
	c  net.Conn
	r  *bufio.Reader
	mu sync.Mutex
}

func dial(rawURL string) (*wsConn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	c, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 16)
	rand.Read(key)
	k := base64.StdEncoding.EncodeToString(key)
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n", u.RequestURI(), u.Host, k)
	r := bufio.NewReaderSize(c, 1<<16)
	res, err := http.ReadResponse(r, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	res.Body.Close()
	sum := sha1.Sum([]byte(k + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if res.StatusCode != http.StatusSwitchingProtocols || res.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(sum[:]) {
		c.Close()
		return nil, fmt.Errorf("websocket handshake with %s: %s", rawURL, res.Status)
	}
	return &wsConn{c: c, r: r}, nil
}

func (w *wsConn) Close() error { return w.c.Close() }

// WriteText sends one masked text frame.
func (w *wsConn) WriteText(data []byte) error { return w.write(0x1, data) }

func (w *wsConn) write(opcode byte, data []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	hdr := []byte{0x80 | opcode}
	switch n := len(data); {
	case n < 126:
		hdr = append(hdr, 0x80|byte(n))
	case n < 1<<16:
		hdr = append(hdr, 0x80|126, byte(n>>8), byte(n))
	default:
		hdr = append(hdr, 0x80|127)
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	mask := make([]byte, 4)
	rand.Read(mask)
	hdr = append(hdr, mask...)
	masked := make([]byte, len(data))
	for i, c := range data {
		masked[i] = c ^ mask[i%4]
	}
	_, err := w.c.Write(append(hdr, masked...))
	return err
}

// ReadMessage reads the next text or binary message, joining its
// fragments and answering pings on the way.
func (w *wsConn) ReadMessage() ([]byte, error) {
	var msg []byte
	for {
		var h [2]byte
		if _, err := io.ReadFull(w.r, h[:]); err != nil {
			return nil, err
		}
		fin, opcode := h[0]&0x80 != 0, h[0]&0x0f
		n := uint64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return nil, err
			}
			n = uint64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(w.r, b[:]); err != nil {
				return nil, err
			}
			n = binary.BigEndian.Uint64(b[:])
		}
		var mask [4]byte
		if h[1]&0x80 != 0 {
			if _, err := io.ReadFull(w.r, mask[:]); err != nil {
				return nil, err
			}
		}
		if n > 256<<20 {
			return nil, fmt.Errorf("websocket frame of %d bytes", n)
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(w.r, payload); err != nil {
			return nil, err
		}
		if h[1]&0x80 != 0 {
			for i := range payload {
				payload[i] ^= mask[i%4]
			}
		}
		switch opcode {
		case 0x8:
			return nil, errors.New("closed by the browser")
		case 0x9:
			w.write(0xA, payload)
			continue
		case 0xA:
			continue
		}
		msg = append(msg, payload...)
		if fin {
			return msg, nil
		}
	}
}
