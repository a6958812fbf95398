"""lsp_latency.py's report keeps what it did not measure: a run replaces its own section or
adds one, and every other section and hand-written line stays (python3 -m unittest)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lsp_latency  # noqa: E402

REPORT = "\n".join([
    "# argus-lsp latency", "", "Intro written by hand.", "",
    "### before", "", "- date: 1", "| a |", "",
    "Commentary on before, by hand.", "",
    "### after", "", "- date: 2", "| b |", ""])


class MergeSection(unittest.TestCase):
    def test_a_new_label_is_appended_and_nothing_else_moves(self):
        out = lsp_latency.merge_section(REPORT, ["### session9", "", "| c |"])
        self.assertTrue(out.startswith(REPORT.rstrip("\n")))
        self.assertTrue(out.endswith("### after\n\n- date: 2\n| b |\n\n### session9\n\n| c |\n"))

    def test_a_known_label_replaces_only_its_own_section(self):
        out = lsp_latency.merge_section(REPORT, ["### before", "", "- date: 3", "| z |"])
        self.assertIn("Intro written by hand.", out)
        self.assertIn("- date: 3\n| z |\n\n### after", out)
        self.assertNotIn("- date: 1", out)
        self.assertIn("- date: 2", out)

    def test_a_first_run_writes_the_header(self):
        out = lsp_latency.merge_section(None, ["### x", "", "| y |"])
        self.assertTrue(out.startswith("# argus-lsp latency"))
        self.assertTrue(out.endswith("### x\n\n| y |\n"))


if __name__ == "__main__":
    unittest.main()
