// Package sales is the golden case of a csv source, a reduce keyed by a
// struct, and a file sink of lines.
package sales

import "fmt"

type Sale struct {
	Region  string
	Product string `csv:"item"`
	Units   int
	Price   float64
}

type RegionProduct struct {
	Region  string
	Product string
}

func ByRegionProduct(s Sale) RegionProduct { return RegionProduct{s.Region, s.Product} }

func Sum(acc, s Sale) Sale {
	acc.Units += s.Units
	acc.Price += s.Price
	return acc
}

func Format(s Sale) string { return fmt.Sprintf("%s/%s units=%d", s.Region, s.Product, s.Units) }
