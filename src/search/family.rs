//! The families of edits the search proposes: a closed set, so that a family no generator
//! names cannot be written, and the priors file (`rules/search/priors.toml`) must give each
//! one its prior and name no other (checked when it is read, see [`super::priors`]). The
//! words are the priors file's keys and the rule ids' tails (`search-compare-op`).

crate::status::closed_set! {
    /// A family of search edits.
    Family {
        // The single-token edits of [`super::mutate`] (and [`super::loop_step`]'s ±1).
        PlusMinusOne => "plus-minus-one",
        CompareOp => "compare-op",
        Variable => "variable",
        ArithOp => "arith-op",
        Constant => "constant",
        Negate => "negate",
        BoolOp => "bool-op",
        MissingReturn => "missing-return",
        SwapArgs => "swap-args",
        Guard => "guard",
        DeleteStmt => "delete-stmt",
        // The data edits of [`super::data`] and [`super::formats`].
        RegexClass => "regex-class",
        RegexQuantifier => "regex-quantifier",
        RegexAnchor => "regex-anchor",
        KnownKey => "known-key",
        FormatField => "format-field",
        FormatSwap => "format-swap",
        FormatDirective => "format-directive",
        // The fix templates of [`super::templates`].
        BuiltinSwap => "builtin-swap",
        BitwiseOp => "bitwise-op",
        Clamp => "clamp",
        SwapOperands => "swap-operands",
        AdvanceBoth => "advance-both",
        LiteralShape => "literal-shape",
        DropTerm => "drop-term",
        Offset => "offset",
        SwapIndex => "swap-index",
        CallArg => "call-arg",
        CombineLocals => "combine-locals",
        InsertCall => "insert-call",
        MembershipAdd => "membership-add",
        Carry => "carry",
        LoopExit => "loop-exit",
        GuardTerm => "guard-term",
        ReturnCondition => "return-condition",
        BaseCase => "base-case",
        DecimalShift => "decimal-shift",
        PercentFraction => "percent-fraction",
        LastDigit => "last-digit",
        SiblingAttr => "sibling-attr",
        ForwardArg => "forward-arg",
        // Splitting without stripping ([`super::splits`]).
        SplitStrip => "split-strip",
        // A missing `await` ([`super::templates::awaits`]).
        MissingAwait => "missing-await",
        MoveStmt => "move-stmt",
        // Issue 36, replay families.
        NoneTest => "none-test",
        ExceptWiden => "except-widen",
        CalleeSwap => "callee-swap",
        WrapConversion => "wrap-conversion",
        FstringPrefix => "fstring-prefix",
        CopyBeforeMutation => "copy-before-mutation",
        // One edit at every site of its expression ([`super::sites`]).
        MultiSite => "multi-site",
    }
}
