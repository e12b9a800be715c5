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
