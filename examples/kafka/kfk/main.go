// Command kfk is the Kafka example's helper: a Kafka broker for a laptop
// (franz-go's kfake, in-process, with transactions), and a producer and a
// read_committed consumer for the example's topics.
//
//	go run ./examples/kafka/kfk broker [-port 9092] [-dir DIR]
//	go run ./examples/kafka/kfk produce [-brokers localhost:9092] [-n 100000] [-keys 100]
//	go run ./examples/kafka/kfk consume [-brokers localhost:9092] [-topic totals] [-check N,KEYS]
//
// broker serves until interrupted, with the topics events (4 partitions)
// and totals (3); with -dir it keeps its data there across restarts.
// produce writes the example's events (kafkacount.Events), keyed by their
// key. consume prints what a read_committed consumer reads of a topic now,
// one value per line; with -check N,KEYS it compares it with the answer
// computed from N events over KEYS keys instead, and exits 1 if they
// differ.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	kafkacount "github.com/pipegen/pipegen/examples/kafka"
	"github.com/pipegen/pipegen/internal/kafkatest"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "broker":
		err = broker(os.Args[2:])
	case "produce":
		err = produce(os.Args[2:])
	case "consume":
		err = consume(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kfk %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kfk broker [-port 9092] [-dir DIR] | produce [-brokers B] [-n N] [-keys K] | consume [-brokers B] [-topic T] [-check N,KEYS]")
	os.Exit(2)
}

func broker(args []string) error {
	fs := flag.NewFlagSet("broker", flag.ExitOnError)
	port := fs.Int("port", 9092, "port to listen on")
	dir := fs.String("dir", "", "keep the broker's data in this directory across restarts")
	fs.Parse(args)
	var opts []kfake.Opt
	if *dir != "" {
		opts = append(opts, kfake.DataDir(*dir))
	}
	c, err := kafkatest.Start(*port, map[string]int32{"events": 4, "totals": 3}, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintf(os.Stderr, "kfk: a Kafka broker (kfake) listens on %s with the topics events (4 partitions) and totals (3); Ctrl-C stops it\n", strings.Join(c.ListenAddrs(), ", "))
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
	return nil
}

func produce(args []string) error {
	fs := flag.NewFlagSet("produce", flag.ExitOnError)
	brokers := fs.String("brokers", "localhost:9092", "bootstrap brokers")
	n := fs.Int("n", 100000, "events to write")
	keys := fs.Int("keys", 100, "distinct keys")
	fs.Parse(args)
	var recs []*kgo.Record
	for _, e := range kafkacount.Events(*n, *keys) {
		v, _ := json.Marshal(e)
		recs = append(recs, &kgo.Record{Key: []byte(e.Key), Value: v})
	}
	if err := kafkatest.Produce(*brokers, "events", recs...); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "kfk: wrote %d events over %d keys to events\n", *n, *keys)
	return nil
}

func consume(args []string) error {
	fs := flag.NewFlagSet("consume", flag.ExitOnError)
	brokers := fs.String("brokers", "localhost:9092", "bootstrap brokers")
	topic := fs.String("topic", "totals", "topic to read")
	check := fs.String("check", "", "N,KEYS: compare with the answer for N events over KEYS keys")
	fs.Parse(args)
	recs, err := kafkatest.ReadCommitted(*brokers, *topic, time.Minute)
	if err != nil {
		return err
	}
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Value))
	}
	if *check == "" {
		for _, l := range got {
			fmt.Println(l)
		}
		return nil
	}
	var n, keys int
	if _, err := fmt.Sscanf(*check, "%d,%d", &n, &keys); err != nil {
		return fmt.Errorf("-check wants N,KEYS, got %q", *check)
	}
	var want []string
	for _, r := range kafkacount.Expected(kafkacount.Events(n, keys)) {
		b, _ := json.Marshal(r)
		want = append(want, string(b))
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s holds %d committed records, which are not the %d expected", *topic, len(got), len(want))
	}
	fmt.Fprintf(os.Stderr, "kfk: %s holds the %d expected results, each once\n", *topic, len(want))
	return nil
}
