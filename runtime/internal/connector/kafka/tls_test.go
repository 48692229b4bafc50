package kafka

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/pipegen/pipegen/runtime/internal/checkpoint"
	"github.com/pipegen/pipegen/runtime/internal/connector/connectortest"
	"github.com/pipegen/pipegen/runtime/internal/connector/format"
)

// selfSigned makes a certificate for 127.0.0.1 that is its own authority,
// and writes it as PEM to a file.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, ca
}

// A cluster behind TLS, its authority named by tls-ca, for the source and
// the sink.
func TestTLS(t *testing.T) {
	cert, ca := selfSigned(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "in", "out"), kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()[0]
	e := sinkEnv(t, brokers, 1, map[string]string{"tls-ca": ca})
	s := NewSink(e, 0, 0, format.EncodeString, nil)
	s.Write("over tls")
	st := snapshot(t, e, func(snap *checkpoint.Snapshot) { s.PreCommit(snap, 0) }, 1, 0)
	var cm committer
	if err := cm.Commit(nil, e.Node(0), st[0]); err != nil {
		t.Fatal(err)
	}
	src := NewSource(connectortest.New(t, 1, connectortest.SourceNode("in", "kafka", map[string]string{
		"brokers": brokers, "topic": "out", "bounded": "latest", "tls-ca": ca})), 0, 0, format.LinesFormat())
	if got := connectortest.ReadAll(src); !slices.Equal(got, []string{"over tls"}) {
		t.Fatalf("read %q", got)
	}
	// Without the authority the certificate is not trusted.
	err = connectortest.Catch(func() {
		NewSource(connectortest.New(t, 1, connectortest.SourceNode("in", "kafka", map[string]string{
			"brokers": brokers, "topic": "out", "tls": "true"})), 0, 0, format.LinesFormat())
	})
	if err == nil {
		t.Fatal("a certificate of an unknown authority was trusted")
	}
}
