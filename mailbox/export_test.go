package mailbox

// ShrinkAfter exposes shrinkAfter to the external tests.
const ShrinkAfter = shrinkAfter
