package kafka

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/pipegen/pipegen/runtime/internal/config"
)

// splitList reads a comma-separated option (brokers, topics): items
// trimmed, empty ones dropped.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// clientOpts are the options of every client of node n: its brokers and
// how it authenticates (SASL, TLS). Passwords are never in the pipeline
// file, nor in a checkpoint: sasl-password-env names the environment
// variable that holds one.
func clientOpts(n *config.NodeConfig) ([]kgo.Opt, error) {
	brokers := splitList(n.Option("brokers"))
	if len(brokers) == 0 {
		return nil, errors.New("brokers is empty: name at least one broker, host:port")
	}
	opts := []kgo.Opt{kgo.SeedBrokers(brokers...), kgo.ClientID("pipegen")}
	if mech := n.Option("sasl-mechanism"); mech != "" && mech != "none" {
		m, err := saslMechanism(n, mech)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	if n.Option("tls") == "true" || n.Option("tls-ca") != "" || n.Option("tls-cert") != "" {
		c, err := tlsConfig(n)
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(c))
	}
	return opts, nil
}

func saslMechanism(n *config.NodeConfig, mech string) (sasl.Mechanism, error) {
	user := n.Option("sasl-user")
	env := n.Option("sasl-password-env")
	if user == "" || env == "" {
		return nil, fmt.Errorf("sasl-mechanism %s needs sasl-user and sasl-password-env (the environment variable that holds the password)", mech)
	}
	pass, ok := os.LookupEnv(env)
	if !ok {
		return nil, fmt.Errorf("sasl-password-env names %s, which is not set in the environment", env)
	}
	switch mech {
	case "plain":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "scram-sha-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "scram-sha-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("sasl-mechanism wants none, plain, scram-sha-256 or scram-sha-512, got %q", mech)
}

func tlsConfig(n *config.NodeConfig) (*tls.Config, error) {
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca := n.Option("tls-ca"); ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls-ca: %s holds no PEM certificate", ca)
		}
		c.RootCAs = pool
	}
	cert, key := n.Option("tls-cert"), n.Option("tls-key")
	if (cert == "") != (key == "") {
		return nil, errors.New("tls-cert and tls-key go together: a client certificate needs its key")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("tls-cert: %w", err)
		}
		c.Certificates = []tls.Certificate{pair}
	}
	return c, nil
}

// durationOption reads a duration option, def when it is not set.
func durationOption(n *config.NodeConfig, name string, def time.Duration) (time.Duration, error) {
	v := n.Option(name)
	if v == "" {
		return def, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s wants a duration such as 500ms, 10s or 5m, got %q", name, v)
	}
	return d, nil
}
