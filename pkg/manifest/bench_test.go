package manifest

import "testing"

func BenchmarkDecode(b *testing.B) {
	data := readTestdata(b, "kube-apiserver.yaml")
	opts := Options{NodeName: "node-1"}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Decode(data, opts); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConfigIdentity is configIdentity's share of BenchmarkDecode: the
// deep print that tells an empty list from none.
func BenchmarkConfigIdentity(b *testing.B) {
	data := readTestdata(b, "kube-apiserver.yaml")
	p, err := Decode(data, Options{NodeName: "node-1"})
	if err != nil {
		b.Fatal(err)
	}
	pod, err := p.Object()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = configIdentity(pod, "node-1")
	}
}
