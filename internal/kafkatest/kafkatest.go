// Package kafkatest runs an in-process Kafka cluster (franz-go's kfake,
// with transactions) for the tests and examples of the Kafka connector,
// and produces and reads the records they need: no broker binary.
package kafkatest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Start starts a cluster of one broker, listening on port (0: any free
// one), with the given topics and their partition counts.
func Start(port int, topics map[string]int32, opts ...kfake.Opt) (*kfake.Cluster, error) {
	o := []kfake.Opt{kfake.NumBrokers(1)}
	if port != 0 {
		o = append(o, kfake.Ports(port))
	}
	for t, n := range topics {
		o = append(o, kfake.SeedTopics(n, t))
	}
	return kfake.NewCluster(append(o, opts...)...)
}

// Produce writes records to Kafka and waits until every one is
// acknowledged. A record without a Topic goes to topic; records with a
// key go to the partition the key hashes to, as Kafka's own producers
// send them.
func Produce(brokers, topic string, recs ...*kgo.Record) error {
	return produce(brokers, topic, kgo.ProducerLinger(5*time.Millisecond), recs)
}

// ProduceManual is Produce with every record going to the partition it
// names.
func ProduceManual(brokers, topic string, recs ...*kgo.Record) error {
	return produce(brokers, topic, kgo.RecordPartitioner(kgo.ManualPartitioner()), recs)
}

func produce(brokers, topic string, opt kgo.Opt, recs []*kgo.Record) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.DefaultProduceTopic(topic), opt)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return cl.ProduceSync(ctx, recs...).FirstErr()
}

// ReadCommitted reads topic from its start to its last stable offsets as a
// consumer with isolation read_committed sees it: every committed record,
// none of an aborted or open transaction, in partition order.
func ReadCommitted(brokers, topic string, timeout time.Duration) ([]*kgo.Record, error) {
	return read(brokers, topic, timeout, kgo.ReadCommitted())
}

// ReadUncommitted reads every record of topic, aborted and open
// transactions included.
func ReadUncommitted(brokers, topic string, timeout time.Duration) ([]*kgo.Record, error) {
	return read(brokers, topic, timeout, kgo.ReadUncommitted())
}

func read(brokers, topic string, timeout time.Duration, iso kgo.IsolationLevel) ([]*kgo.Record, error) {
	adm, err := kgo.NewClient(kgo.SeedBrokers(brokers))
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	list := kadm.NewClient(adm).ListEndOffsets
	if iso == kgo.ReadCommitted() {
		list = kadm.NewClient(adm).ListCommittedOffsets
	}
	ends, err := list(ctx, topic)
	if err != nil {
		return nil, err
	}
	end := map[int32]int64{}
	var lerr error
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			lerr = o.Err
		}
		end[o.Partition] = o.Offset
	})
	if lerr != nil {
		return nil, fmt.Errorf("end offsets of %s: %w", topic, lerr)
	}
	parts := map[int32]kgo.Offset{}
	for p := range end {
		parts[p] = kgo.NewOffset().AtStart()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}),
		kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords())
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	pos := map[int32]int64{}
	var out []*kgo.Record
	for {
		caught := true
		for p, e := range end {
			if pos[p] < e {
				caught = false
			}
		}
		if caught {
			return out, nil
		}
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s: at %v of %v after %s", topic, pos, end, timeout)
		}
		for _, e := range fs.Errors() {
			if !errors.Is(e.Err, context.DeadlineExceeded) {
				return nil, e.Err
			}
		}
		fs.EachRecord(func(r *kgo.Record) {
			pos[r.Partition] = r.Offset + 1
			if !r.Attrs.IsControl() && r.Offset < end[r.Partition] {
				out = append(out, r)
			}
		})
	}
}
