"""unittest's assert methods the kit reads, one list: probed in both runs (`probe.unit_probes`) and held by the
supervisor in the second (`answers.answer_holds`), with the aliases unittest had (3.11 has them all, 3.12 dropped
them: a name the TestCase lacks fails the test in both runs alike).

Sent before probe.py's source with the plugin and with the second harness (one namespace each,
`donegate.hidden.ship`), imported by the kit. Names only, nothing to run.
"""

UNIT_EQ = ("assertEqual", "assertEquals", "failUnlessEqual")  # self.assertEqual(a, b): a == b
UNIT_TRUE = ("assertTrue", "assert_", "failUnless")  # self.assertTrue(a == b)
UNIT_FALSE = ("assertFalse", "failIf")  # self.assertFalse(a != b)
