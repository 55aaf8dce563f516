#!/usr/bin/env bash
# Reproduce docs/RESULTS.md: the papers' experiments with `filterkit evaluate`.
# Usage: docs/reproduce.sh [DATA_DIR [OUT_DIR]]   (DATA_DIR defaults to ../shared/data)
# PARTS="uci text curve skewed" (the default) picks the experiments; JOBS=N runs N processes.
# The classifier-setting experiments of issue 21 are more PARTS: "intercept decision curve-decision prose"
# Issue 22's are "multiply multiclass auto" (PARTS="uci text curve skewed intercept decision curve-decision
# prose multiply multiclass auto" runs everything). Issue 40's are "weighting collapse" (REUTERS_DIR: the
# Debian weka package's examples folder, holding ReutersGrain-train.arff and ReutersCorn-train.arff;
# WEIGHTING_SETS and REUTERS_SETS pick a subset, as docs/RESULTS.md §8 did). Issue 47's is "nbr" (apt-cache).
# Writes one JSON per run into OUT_DIR, then: python docs/summarize_results.py OUT_DIR
# (parts weighting and collapse: python docs/experiments/summarize_weighting.py OUT_DIR; nbr: summarize_nbr.py)
set -euo pipefail
data=${1:-"$(dirname "$0")/../../shared/data"}
out=${2:-results}
jobs=${JOBS:-1}
parts=${PARTS:-"uci text curve skewed"}
mkdir -p "$out"
wanted() { [[ " $parts " == *" $1 "* ]]; }
# JMLR 2003's selection chains, run in part 2 and again under each decision rule.
selection_chains=(
    "ig --presence --no-scale select --top 1000 binarize l2"
    "bns --presence --no-scale select --top 1000 binarize l2"
    "ig --presence --no-scale select --top 1000 binarize"
    "bns --presence --no-scale select --top 1000 binarize"
    "ig --presence --no-scale select --top 500 binarize"
    "bns --presence --no-scale select --top 500 binarize"
)

# 1. KDD'09 Fig. 3 / Table 1: the UCI sets, every class-vs-rest task with >= 50 positives
#    (the minority class of a two-class set), 10-fold CV.
wanted uci && for path in "$data"/uci/*.arff; do
    name=$(basename "$path" .arff)
    class=last; [ "$name" = wine ] && class=first
    filterkit evaluate -q --jobs "$jobs" -c "$class" --each-class --min-positives 50 --folds 10 --json --compare "$path" \
        "minmax" \
        "bns l2" \
        "shape --no-zero-bin bns l2" \
        "bns --no-zero-preserve l2" \
        "shape --no-zero-bin --no-zero-preserve bns --no-zero-preserve l2" \
        > "$out/uci-$name.json" || echo "uci $name: no task" >&2
done

# 2. Text (Forman's sets): KDD'09 representations, and JMLR 2003's BNS vs IG selection,
#    every class with >= 50 positives, 5-fold CV.
wanted text && for path in "$data"/text/*.arff; do
    name=$(basename "$path" .wc.arff)
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json --compare "$path" \
        "binarize l2" \
        "binarize bns l2" \
        "shape bns l2" \
        "${selection_chains[@]}" \
        > "$out/text-$name.json"
done

# 2b. The KDD'09 learning curve on one text set: the gains of shaping are at small training sizes.
wanted curve && filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json \
    --train-fraction 0.05,0.1,0.2,0.5,1 --compare "$data/text/oh10.wc.arff" \
    "binarize l2" "binarize bns l2" "shape bns l2" > "$out/curve-oh10.json"

# 3. aiSVM vs svm on the most skewed text tasks: every class with at most 5% of the rows
#    and at least 10 positives, 5-fold CV, the same folds for both classifiers.
skewed_labels() {
    python3 - "$1" <<'PY'
import sys
import numpy as np
from filterkit.arff import read_arff
schema, data = read_arff(sys.argv[1])
codes = data.values[:, -1].toarray().ravel() if hasattr(data.values, "toarray") else data.values[:, -1]
counts = np.bincount(codes[~np.isnan(codes)].astype(int), minlength=len(schema.attributes[-1].labels))
for label, count in zip(schema.attributes[-1].labels, counts):
    if 10 <= count <= 0.05 * counts.sum():
        print(label)
PY
}
wanted skewed && for path in "$data"/text/*.arff; do
    name=$(basename "$path" .wc.arff)
    skewed_labels "$path" | while read -r label; do
        for classifier in svm aisvm; do
            filterkit evaluate -q --jobs "$jobs" --positive "$label" --folds 5 --classifier "$classifier" --json \
                "$path" binarize l2 > "$out/skewed-$name-$label-$classifier.json"
        done
    done
done

# 4. Issue 21: the baseline chains again with one classifier setting changed, on the same folds (same seed),
#    each compared task by task with its baseline above by docs/summarize_results.py.

# 4a. The zero shift with a free SVM offset b (KDD'09 §3.1 argues for the shift because b "is not
#     regularized"; liblinear regularizes it).  The scaling and shaping chains of part 1, with and without
#     the zero shift, --svm-intercept free.  The nine smaller sets: the free b's Newton solver takes about 34 s
#     of CPU per task and chain on letter (26 tasks) and 23 s on optdigits (10 tasks), more than we could afford.
wanted intercept && for name in credit-g diabetes ecoli glass iris sonar vehicle vowel wine; do
    path="$data/uci/$name.arff"
    class=last; [ "$name" = wine ] && class=first
    filterkit evaluate -q --jobs "$jobs" -c "$class" --each-class --min-positives 50 --folds 10 --json --compare \
        --svm-intercept free "$path" \
        "bns l2" \
        "shape --no-zero-bin bns l2" \
        "bns --no-zero-preserve l2" \
        "shape --no-zero-bin --no-zero-preserve bns --no-zero-preserve l2" \
        > "$out/intercept-uci-$name.json" || echo "intercept $name: no task" >&2
done
#     Without l2 the zero shift is an offset per feature, which a free b absorbs exactly (diabetes as the check).
wanted intercept && for intercept in regularized free; do
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 10 --json --compare \
        --svm-intercept "$intercept" "$data/uci/diabetes.arff" \
        "shape --no-zero-bin bns" "shape --no-zero-bin --no-zero-preserve bns --no-zero-preserve" \
        > "$out/intercept-offset-diabetes-$intercept.json"
done

# 4b. JMLR 2003's BNS vs IG selection decided by the SVM's own threshold (margin) and by Platt's sigmoid
#     fitted on the training rows' own decision values (platt), against part 2's platt-cv.
wanted decision && for decision in margin platt; do
    for path in "$data"/text/*.arff; do
        name=$(basename "$path" .wc.arff)
        filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json --compare \
            --svm-decision "$decision" "$path" \
            "${selection_chains[@]}" \
            > "$out/decision-text-$decision-$name.json"
    done
done

# 4c. The learning curve of part 2b with the other two decision rules: is the F1 collapse at 5 % the sigmoid's?
wanted curve-decision && for decision in margin platt; do
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json \
        --svm-decision "$decision" --train-fraction 0.05,0.1,0.2,0.5,1 --compare "$data/text/oh10.wc.arff" \
        "binarize l2" "binarize bns l2" "shape bns l2" > "$out/decision-curve-$decision-oh10.json"
done

# 4d. aiSVM's other reading of Algorithm 1 (the prose's ρ_k < ρ_max) on part 3's skewed tasks.
wanted prose && for path in "$data"/text/*.arff; do
    name=$(basename "$path" .wc.arff)
    skewed_labels "$path" | while read -r label; do
        filterkit evaluate -q --jobs "$jobs" --positive "$label" --folds 5 --classifier aisvm --aisvm-reading prose \
            --json "$path" binarize l2 > "$out/prose-$name-$label-aisvm.json"
    done
done

# 5. tf·BNS (issue 22): scorers' --multiply on the text sets, the folds of part 2.
wanted multiply && for path in "$data"/text/*.arff; do
    name=$(basename "$path" .wc.arff)
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json --compare "$path" \
        "bns --multiply l2" "bns l2" "binarize bns l2" "ig --multiply l2" > "$out/multiply-text-$name.json"
done

# 6. Multi-class (issue 22): a one-vs-rest SVM over all classes of oh0 and oh10, against the --each-class
#    tasks of the same chains on the same folds.
wanted multiclass && for name in oh0 oh10; do
    path="$data/text/$name.wc.arff"
    filterkit evaluate -q --jobs "$jobs" --multiclass --folds 5 --stats --json --compare "$path" \
        "binarize l2" "binarize bns l2" "binarize bns --combine mean l2" "binarize ig l2" "bns --multiply l2" \
        "shape --multiclass max bns l2" "shape --multiclass one-vs-rest bns l2" > "$out/multiclass-$name.json"
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json --compare "$path" \
        "binarize l2" "binarize bns l2" "bns --multiply l2" "shape bns l2" > "$out/multiclass-each-$name.json"
done

# 7. auto (issue 22): docs/auto_experiment.py runs `auto l2` on the folds of parts 1 and 2, and the held-back sets.
wanted auto && python3 "$(dirname "$0")/auto_experiment.py" run "$data" "$out/auto"

# 8. Supervised term weighting (issue 40 item 5): tf·s for each metric s, against tf·idf (--stats), under the
#    default decision and the margin; the text sets as part 2, and Reuters through `words`, with and without bigrams.
weighting_chains=(
    "idf --presence --multiply l2" "rf --presence --multiply l2" "nbr --presence --multiply l2"
    "didf --presence --multiply l2" "didf --smooth --presence --multiply l2" "igm --presence --multiply l2"
    "bns --presence --multiply l2" "shape bns l2"
)
reuters=${REUTERS_DIR:-/usr/share/doc/weka/examples}
weighting_sets=${WEIGHTING_SETS:-"oh0 oh5 oh10 tr11 tr12 tr23 tr41"}
wanted weighting && for decision in platt-cv margin; do
    for name in $weighting_sets; do
        filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --stats --json --compare \
            --svm-decision "$decision" "$data/text/$name.wc.arff" "${weighting_chains[@]}" \
            > "$out/weighting-$decision-$name.json"
    done
    for name in ${REUTERS_SETS:-Grain Corn}; do
        for ngrams in 1-1 1-2; do
            filterkit evaluate -q --jobs "$jobs" --folds 5 --stats --json --compare --svm-decision "$decision" \
                "$reuters/Reuters$name-train.arff" \
                "${weighting_chains[@]/#/words --counts --lowercase --ngrams $ngrams }" \
                > "$out/weighting-$decision-reuters$name-$ngrams.json"
        done
    done
done

# 8b. nbr as Wang & Manning define it (issue 47 item 9): part 8's tasks, folds and curve with the constant-less
#     nbr of filterkit 0.3 (nbr0, docs/experiments/nbr_constantless) beside the nbr of parts "weighting" and
#     "collapse"; and the paper's own setting (binarized words, bigrams, --nb-alpha 1) on two short-text tasks
#     any Debian machine can build, package descriptions by section (docs/experiments/debian_descriptions.py).
#     python docs/experiments/summarize_nbr.py OUT_DIR prints the tables.
nbr0=("--plugins-dir" "$(dirname "$0")/experiments/nbr_constantless")
nbr0_chains=("idf --presence --multiply l2" "nbr0 --presence --multiply l2")
wanted nbr && for decision in platt-cv margin; do
    for name in $weighting_sets; do
        filterkit "${nbr0[@]}" evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --stats --json \
            --compare --svm-decision "$decision" "$data/text/$name.wc.arff" "${nbr0_chains[@]}" \
            > "$out/nbr0-$decision-$name.json"
    done
    for name in ${REUTERS_SETS:-Grain Corn}; do
        for ngrams in 1-1 1-2; do
            filterkit "${nbr0[@]}" evaluate -q --jobs "$jobs" --folds 5 --stats --json --compare \
                --svm-decision "$decision" "$reuters/Reuters$name-train.arff" \
                "${nbr0_chains[@]/#/words --counts --lowercase --ngrams $ngrams }" \
                > "$out/nbr0-$decision-reuters$name-$ngrams.json"
        done
    done
done
wanted nbr && filterkit "${nbr0[@]}" evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json \
    --train-fraction 0.05,0.1,0.2 --compare "$data/text/oh10.wc.arff" "${nbr0_chains[@]}" > "$out/nbr0-curve-oh10.json"
wanted nbr && for sections in "admin utils" "net web"; do
    task=debian-${sections/ /-}
    apt-cache dumpavail | python3 "$(dirname "$0")/experiments/debian_descriptions.py" $sections > "$out/$task.arff"
    for decision in platt-cv margin; do
        for ngrams in 1-1 1-2; do
            w="words --lowercase --ngrams $ngrams --words-to-keep 1000000"
            filterkit "${nbr0[@]}" evaluate -q --jobs "$jobs" --folds 5 --stats --json --compare \
                --svm-decision "$decision" "$out/$task.arff" "$w l2" "$w idf --presence --multiply l2" \
                "$w nbr0 --presence --multiply" "$w nbr --nb-alpha 1 --presence --multiply" \
                "$w nbr0 --presence --multiply l2" "$w nbr --nb-alpha 1 --presence --multiply l2" "$w" \
                > "$out/paper-$decision-$task-$ngrams.json"
        done
    done
done

# 9. The collapse at 5-10 % training (issue 40 item 6): BNS with one thing changed at a time
#    (docs/experiments/bns_clips/collapse_metrics.py), on part 2b's learning curve; and part 8's weights there.
wanted collapse && filterkit --plugins-dir "$(dirname "$0")/experiments/bns_clips" evaluate -q --jobs "$jobs" --each-class \
    --min-positives 50 --folds 5 --json --train-fraction 0.05,0.1,0.2,1 --compare \
    "$data/text/oh10.wc.arff" "binarize l2" "binarize bns l2" "shape bns l2" "binarize bnsh l2" "shape bnsh l2" \
    "binarize bnsht l2" "binarize bnshf l2" "binarize bnsc l2" "binarize bnscap l2" > "$out/collapse-oh10.json"
half_document_chains=("bns --bns-half-document --presence --multiply l2" "shape bns --bns-half-document l2")
wanted collapse && filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --json \
    --train-fraction 0.05,0.1,0.2 --compare "$data/text/oh10.wc.arff" "${weighting_chains[@]}" \
    "${half_document_chains[@]}" > "$out/weighting-curve-oh10.json"
# ... and the half-document clip at full size on part 8's text tasks and folds, against the same chains without it.
wanted collapse && for name in $weighting_sets; do
    filterkit evaluate -q --jobs "$jobs" --each-class --min-positives 50 --folds 5 --stats --json --compare \
        --svm-decision platt-cv "$data/text/$name.wc.arff" "bns --presence --multiply l2" "shape bns l2" \
        "${half_document_chains[@]}" > "$out/half-document-$name.json"
done

# Every command that ran succeeded (set -e); the last part left out must not make the script fail.
exit 0
