package statebench_test
import ("os"; "testing"; "github.com/pipegen/pipegen/compile")
func TestZZBuild(t *testing.T) {
	for _, b := range []string{"memory", "pebble"} {
		res, err := compile.Generate("pipeline.yaml", compile.Options{StateBackend: b})
		if err != nil { t.Fatal(err) }
		if err := res.Build(os.Getenv("OUT") + "/statebench-" + b); err != nil { t.Fatal(err) }
	}
}
