package badkafka

type Event struct{ Key string }

func BadKey(e Event) string { return e.Key }

func FloatKey(s string) float64 { return 0 }
