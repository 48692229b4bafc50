package main

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// chart draws the events per CPU-second of each query: pipegen at
// parallelism 1, the hand-written program, and Flink's published figure
// per core.
func chart(rep *Report, path string) error {
	p := plot.New()
	p.Title.Text = "Nexmark: million events per CPU-second"
	p.Y.Label.Text = "M events / CPU-s"
	var names []string
	var pipegen, hand, flink plotter.Values
	for _, r := range rep.Results {
		names = append(names, r.Query)
		pipegen = append(pipegen, r.EventsPerCPU/1e6)
		hand = append(hand, r.HandPerCPU/1e6)
		flink = append(flink, r.FlinkPerCore/1e6)
	}
	w := vg.Points(14)
	bars := []struct {
		label  string
		values plotter.Values
		c      color.Color
	}{
		{"pipegen, parallelism 1", pipegen, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"hand-written Go", hand, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"Flink 1.13 per core (published)", flink, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
	}
	for i, b := range bars {
		bc, err := plotter.NewBarChart(b.values, w)
		if err != nil {
			return err
		}
		bc.Color = b.c
		bc.LineStyle.Width = 0
		bc.Offset = vg.Length(i-1) * w
		p.Add(bc)
		p.Legend.Add(b.label, bc)
	}
	p.Legend.Top = true
	p.Legend.Left = true
	top := 0.0
	for _, b := range bars {
		for _, v := range b.values {
			top = max(top, v)
		}
	}
	p.Y.Min, p.Y.Max = 0, top*1.3
	p.NominalX(names...)
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}
