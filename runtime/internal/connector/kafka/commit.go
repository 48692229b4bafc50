package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/pipegen/pipegen/runtime/internal/config"
	"github.com/pipegen/pipegen/runtime/internal/connector"
	"github.com/pipegen/pipegen/runtime/internal/storage"
	"github.com/pipegen/pipegen/runtime/vfs"
)

func init() {
	connector.Register("kafka", committer{})
}

// committer commits the transactions of Kafka sinks, for the coordinator
// once a checkpoint is complete and for recovery, and aborts those that no
// checkpoint commits before a run starts.
type committer struct{}

// admins are the clients that commit and abort transactions, one per set
// of client options (brokers and authentication), kept for the life of the
// process.
var (
	adminsMu sync.Mutex
	admins   = map[string]*kgo.Client{}
)

// adminFor returns the client that commits node n's transactions.
func adminFor(n *config.NodeConfig) (*kgo.Client, error) {
	key := strings.Join([]string{n.Option("brokers"), n.Option("sasl-mechanism"), n.Option("sasl-user"), n.Option("sasl-password-env"),
		n.Option("tls"), n.Option("tls-ca"), n.Option("tls-cert"), n.Option("tls-key")}, "\x00")
	adminsMu.Lock()
	defer adminsMu.Unlock()
	if cl := admins[key]; cl != nil {
		return cl, nil
	}
	opts, err := clientOpts(n)
	if err != nil {
		return nil, err
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	admins[key] = cl
	return cl, nil
}

// Commit commits the transactions of a sink subtask's checkpoint. It is
// idempotent: a transaction committed before (by the coordinator, before
// a crash, or by an earlier recovery) is left alone.
func (committer) Commit(_ vfs.FS, n *config.NodeConfig, s storage.SinkState) error {
	if len(s.Transactions) == 0 {
		return nil
	}
	if n == nil {
		return fmt.Errorf("the checkpoint holds %d Kafka transactions of a sink this version of the job no longer has: put the sink back for a run (its brokers are not in the checkpoint), or run with --fresh", len(s.Transactions))
	}
	cl, err := adminFor(n)
	if err != nil {
		return fmt.Errorf("sinks.%s: %w", n.Name, err)
	}
	var errs []error
	for _, t := range s.Transactions {
		if err := endTxn(cl, t, n); err != nil {
			errs = append(errs, fmt.Errorf("sinks.%s[%d]: %w", n.Name, s.Subtask, err))
		}
	}
	return errors.Join(errs...)
}

// ErrTransactionAborted is a transaction that a checkpoint commits but the
// broker aborted first: its records are lost from the output.
var ErrTransactionAborted = errors.New("aborted by the broker before the checkpoint could commit it")

// endTxn commits transaction t with an EndTxn request of its own: the
// client that wrote it is gone (closed after its flush, or with the
// process that crashed), and a transaction is named by its transactional
// id, producer id and epoch alone.
func endTxn(cl *kgo.Client, t storage.Transaction, n *config.NodeConfig) error {
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		req := kmsg.NewPtrEndTxnRequest()
		req.TransactionalID = t.ID
		req.ProducerID = t.Producer
		req.ProducerEpoch = t.Epoch
		req.Commit = true
		resp, err := req.RequestWith(ctx, cl)
		cancel()
		if err != nil {
			return fmt.Errorf("commit transaction %s: %w", t.ID, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, kerr.ConcurrentTransactions) && attempt < 50:
			time.Sleep(20 * time.Millisecond) // the broker is completing it
			continue
		case errors.Is(err, kerr.ProducerFenced), errors.Is(err, kerr.InvalidProducerEpoch), errors.Is(err, kerr.InvalidProducerIDMapping):
			// The transactional id moved on: to a later transaction of
			// this job, which recovery or the sink began only after this
			// one was committed, or it expired idle since. Committed.
			return nil
		case errors.Is(err, kerr.InvalidTxnState):
			timeout := n.Option("transaction-timeout")
			if timeout == "" {
				timeout = DefaultTransactionTimeout.String()
			}
			return fmt.Errorf("transaction %s (producer %d, epoch %d) was %w: its records are lost from the output. Its transaction timeout (transaction-timeout, %s) ran out before the checkpoint that holds it was committed: after a crash the job must resume within that time (raise transaction-timeout, up to the broker's transaction.max.timeout.ms)", t.ID, t.Producer, t.Epoch, ErrTransactionAborted, timeout)
		default:
			return fmt.Errorf("commit transaction %s: %w", t.ID, err)
		}
	}
}

// Clean aborts the open transactions of sink n that no checkpoint commits,
// before a run starts: those that a run wrote after the checkpoint it
// resumes from (Recover committed that checkpoint's already), also of
// subtasks that a run with a higher parallelism had. Records that
// transactions committed stay in the topic: Kafka cannot take them back,
// so a run from the beginning (or from an older checkpoint) writes them
// again.
func (committer) Clean(_ vfs.FS, n *config.NodeConfig, committed *storage.NodeState) (string, error) {
	cl, err := adminFor(n)
	if err != nil {
		return "", err
	}
	prefix := transactionalPrefix(n)
	ids, err := openTransactions(cl, prefix)
	listed := err == nil
	if unreachable(err) {
		return "", fmt.Errorf("cannot reach the brokers %s to abort the transactions no checkpoint commits: %w", n.Option("brokers"), err)
	}
	if err != nil {
		// Without ListTransactions (Kafka before 3.0, or no DESCRIBE on
		// transactional ids): every id the subtasks may have used.
		subs := n.Parallelism
		if committed != nil {
			for _, s := range committed.Sinks {
				subs = max(subs, s.Subtask+1)
			}
		}
		ids = nil
		for sub := range subs {
			for slot := range maxOpen {
				ids = append(ids, fmt.Sprintf("%s-%d-%d", prefix, sub, slot))
			}
		}
	}
	timeout, err := durationOption(n, "transaction-timeout", DefaultTransactionTimeout)
	if err != nil {
		return "", err
	}
	aborted := 0
	for _, id := range ids {
		ok, err := fence(cl, id, timeout)
		if err != nil {
			return "", err
		}
		if ok {
			aborted++
		}
	}
	switch {
	case aborted == 0:
		return "", nil
	case !listed:
		return fmt.Sprintf("the open transactions, if any, of %d Kafka transactional ids %s-* (fenced)", aborted, prefix), nil
	}
	return fmt.Sprintf("%d open Kafka transactions that no checkpoint commits (aborted)", aborted), nil
}

// unreachable reports whether err says that the cluster could not be
// reached at all, rather than that it answered no.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) || errors.Is(err, context.DeadlineExceeded)
}

// openTransactions lists the transactional ids of the prefix whose
// transactions are open.
func openTransactions(cl *kgo.Client, prefix string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	listed, err := kadm.NewClient(cl).ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, t := range listed.Sorted() {
		if t.State == "Ongoing" && strings.HasPrefix(t.TxnID, prefix+"-") {
			ids = append(ids, t.TxnID)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// fence bumps the epoch of transactional id, which aborts its open
// transaction and fences off any client that still writes with it (a
// zombie of an earlier run). It reports whether it aborted one: whether
// the id was known.
func fence(cl *kgo.Client, id string, timeout time.Duration) (bool, error) {
	for attempt := 0; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		req := kmsg.NewPtrInitProducerIDRequest()
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(timeout.Milliseconds())
		req.ProducerID = -1
		req.ProducerEpoch = -1
		resp, err := req.RequestWith(ctx, cl)
		cancel()
		if err != nil {
			return false, fmt.Errorf("abort the transaction of %s: %w", id, err)
		}
		err = kerr.ErrorForCode(resp.ErrorCode)
		switch {
		case err == nil:
			return resp.ProducerEpoch > 0, nil
		case errors.Is(err, kerr.ConcurrentTransactions) && attempt < 50:
			time.Sleep(20 * time.Millisecond)
			continue
		}
		return false, fmt.Errorf("abort the transaction of %s: %w", id, err)
	}
}

// MoveAside moves nothing: what a Kafka sink committed is in its topic for
// good. run --fresh aborts its open transactions (Clean) and writes from
// the beginning.
func (committer) MoveAside(vfs.FS, *config.NodeConfig, string) (string, error) { return "", nil }

// Lock takes nothing: two instances of a job fence each other's
// transactions (the checkpoint directory's lock keeps a second one out).
func (committer) Lock(vfs.FS, *config.NodeConfig) (io.Closer, error) { return nopCloser{}, nil }

type nopCloser struct{}

func (nopCloser) Close() error { return nil }
