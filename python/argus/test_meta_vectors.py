"""The shared launch-expression vectors (tests/data/launch_expr_vectors.json)
against the Python loader's evaluator: the same cases run against
ir::LaunchExpr::evaluate, the checker's encoding and the GPU runtime's SizeExpr
in the C++ tests, so the four cannot drift apart."""

import json
import os
import unittest

from argus import meta

_VECTORS = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "data", "launch_expr_vectors.json")


class LaunchExpressionVectors(unittest.TestCase):
    def test_every_case(self):
        with open(_VECTORS, encoding="utf-8") as f:
            cases = json.load(f)["cases"]
        self.assertGreater(len(cases), 20)
        for case in cases:
            with self.subTest(case["name"]):
                if case.get("error"):
                    with self.assertRaises(ZeroDivisionError):
                        meta.evaluate(case["expr"], case["sizes"])
                else:
                    self.assertEqual(meta.evaluate(case["expr"], case["sizes"]), case["value"])


if __name__ == "__main__":
    unittest.main()
