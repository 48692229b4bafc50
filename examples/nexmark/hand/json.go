package hand

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/pipegen/pipegen/examples/nexmark"
)

// The JSON of the output records, written by hand as a Go programmer
// would for a hot loop: appended to a buffer, no reflection. It is
// encoding/json's output for these types (without HTML escaping), which
// the tests check.

// appendString appends s as a JSON string: as it is when it needs no
// escaping (the generator's text never does), else by encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(s)
			return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json writes a float64.
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		j, _ := json.Marshal(f)
		return append(b, j...)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, key...)
	return strconv.AppendInt(b, v, 10)
}

func appendBid(b []byte, x *nexmark.Bid) []byte {
	b = appendInt(b, `{"auction":`, x.Auction)
	b = appendInt(b, `,"bidder":`, x.Bidder)
	b = appendInt(b, `,"price":`, x.Price)
	b = appendInt(b, `,"dateTime":`, x.DateTime)
	b = append(b, `,"extra":`...)
	b = appendString(b, x.Extra)
	return append(b, '}', '\n')
}

func appendEuroBid(b []byte, x *nexmark.EuroBid) []byte {
	b = appendInt(b, `{"auction":`, x.Auction)
	b = appendInt(b, `,"bidder":`, x.Bidder)
	b = append(b, `,"price":`...)
	b = appendFloat(b, x.Price)
	b = appendInt(b, `,"dateTime":`, x.DateTime)
	b = append(b, `,"extra":`...)
	b = appendString(b, x.Extra)
	return append(b, '}', '\n')
}

func appendAuctionPrice(b []byte, auction, price int64) []byte {
	b = appendInt(b, `{"auction":`, auction)
	b = appendInt(b, `,"price":`, price)
	return append(b, '}', '\n')
}

func appendLocalItem(b []byte, name, city, state string, id int64) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, name)
	b = append(b, `,"city":`...)
	b = appendString(b, city)
	b = append(b, `,"state":`...)
	b = appendString(b, state)
	b = appendInt(b, `,"id":`, id)
	return append(b, '}', '\n')
}

func appendCategoryPrice(b []byte, category, avg int64) []byte {
	b = appendInt(b, `{"id":`, category)
	b = appendInt(b, `,"final":`, avg)
	return append(b, '}', '\n')
}

func appendHotAuction(b []byte, auction, num, end int64) []byte {
	b = appendInt(b, `{"auction":`, auction)
	b = appendInt(b, `,"num":`, num)
	b = appendInt(b, `,"endtime":`, end)
	return append(b, '}', '\n')
}

func appendNewUser(b []byte, id int64, name string, start int64) []byte {
	b = appendInt(b, `{"id":`, id)
	b = append(b, `,"name":`...)
	b = appendString(b, name)
	b = appendInt(b, `,"starttime":`, start)
	return append(b, '}', '\n')
}

// AppendEvent appends e as a line of JSON, as encoding/json writes it.
func AppendEvent(b []byte, e *nexmark.Event) []byte {
	b = appendInt(b, `{"event_type":`, int64(e.Type))
	switch e.Type {
	case nexmark.PersonEvent:
		p := e.Person
		b = appendInt(b, `,"person":{"id":`, p.ID)
		for _, f := range [...]struct{ k, v string }{{`,"name":`, p.Name}, {`,"emailAddress":`, p.EmailAddress}, {`,"creditCard":`, p.CreditCard}, {`,"city":`, p.City}, {`,"state":`, p.State}} {
			b = append(b, f.k...)
			b = appendString(b, f.v)
		}
		b = appendInt(b, `,"dateTime":`, p.DateTime)
		b = append(b, `,"extra":`...)
		b = appendString(b, p.Extra)
	case nexmark.AuctionEvent:
		a := e.Auction
		b = appendInt(b, `,"auction":{"id":`, a.ID)
		b = append(b, `,"itemName":`...)
		b = appendString(b, a.ItemName)
		b = append(b, `,"description":`...)
		b = appendString(b, a.Description)
		b = appendInt(b, `,"initialBid":`, a.InitialBid)
		b = appendInt(b, `,"reserve":`, a.Reserve)
		b = appendInt(b, `,"dateTime":`, a.DateTime)
		b = appendInt(b, `,"expires":`, a.Expires)
		b = appendInt(b, `,"seller":`, a.Seller)
		b = appendInt(b, `,"category":`, a.Category)
		b = append(b, `,"extra":`...)
		b = appendString(b, a.Extra)
	default:
		b = append(b, `,"bid":`...)
		b = appendBid(b, &e.Bid)
		return append(b[:len(b)-1], '}', '\n')
	}
	return append(b, '}', '}', '\n')
}
