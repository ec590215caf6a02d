"""Go-compatible formatting helpers."""

import unittest

from . import gojson


class TestGoFormatting(unittest.TestCase):
    def test_float_like_fmt_v(self):
        cases = {8080.0: "8080", 1.5: "1.5", 1e6: "1e+06", 123456.0: "123456",
                 0.0001: "0.0001", 1e-05: "1e-05", 123456789.0: "1.23456789e+08",
                 -2.5: "-2.5", 0.0: "0"}
        for f, want in cases.items():
            self.assertEqual(gojson.go_float(f), want, f)

    def test_duration_string(self):
        self.assertEqual(gojson.go_duration(5_000_000_000), "5s")
        self.assertEqual(gojson.go_duration(86_400_000_000_000), "24h0m0s")
        self.assertEqual(gojson.go_duration(90_000_000_000), "1m30s")
        self.assertEqual(gojson.go_duration(100_000_000), "100ms")

    def test_parse_duration(self):
        self.assertEqual(gojson.parse_duration("1m30s"), 90_000_000_000)
        self.assertEqual(gojson.parse_duration("250ms"), 250_000_000)
        with self.assertRaises(ValueError):
            gojson.parse_duration("ten seconds")

    def test_times(self):
        self.assertIsNone(gojson.rfc3339(0))
        s = gojson.rfc3339(1717200003200000000)
        self.assertEqual(s, "2024-06-01T00:00:03.2Z")
        self.assertEqual(gojson.parse_rfc3339(s), 1717200003200000000)

    def test_multierror(self):
        self.assertEqual(gojson.multierror(["a"]), "1 error occurred:\n\t* a\n\n")
        self.assertEqual(gojson.multierror(["a", "b"]),
                         "2 errors occurred:\n\t* a\n\t* b\n\n")

    def test_encoding_sorted_and_utf8(self):
        self.assertEqual(gojson.encode({"b": 1, "a": "é", "n": None}),
                         '{"a":"é","b":1,"n":null}'.encode())
        self.assertTrue(gojson.encode({"a": 1}, pretty=True).endswith(b"}\n"))


if __name__ == "__main__":
    unittest.main()
