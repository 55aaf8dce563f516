import weka.attributeSelection.ASEvaluation;
import weka.attributeSelection.ChiSquaredAttributeEval;
import weka.attributeSelection.InfoGainAttributeEval;
import weka.attributeSelection.Ranker;
import weka.core.Instances;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Prints Weka 3.6's rankings of a data set's attributes by InfoGainAttributeEval and ChiSquaredAttributeEval, with
 * and without -B (numeric attributes binarized instead of discretized by MDL), with their default Ranker: for each,
 * a line "# ig -B" (or "# chi", ...), then one line per attribute, best first: its 1-based index, name and merit at
 * full precision (Double.toString).  Usage: java -cp weka.jar WekaRanker.java FILE CLASS [FILE CLASS ...], CLASS
 * first, last or N; each file's rankings follow a line "## K", K its 0-based position among the files, so that one
 * JVM ranks a whole batch of files.
 */
public class WekaRanker {
  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder();
    for (int file = 0; 2 * file + 1 < args.length; file++) {
      out.append("## ").append(file).append('\n');
      rank(args[2 * file], args[2 * file + 1], out);
    }
    System.out.print(out);
  }

  private static void rank(String path, String target, StringBuilder out) throws Exception {
    Instances data = DataSource.read(path);
    data.setClassIndex(target.equals("first") ? 0
        : target.equals("last") ? data.numAttributes() - 1 : Integer.parseInt(target) - 1);
    for (String metric : new String[] {"ig", "chi"}) {
      for (boolean binarize : new boolean[] {true, false}) {
        ASEvaluation evaluator;
        if (metric.equals("ig")) {
          InfoGainAttributeEval infoGain = new InfoGainAttributeEval();
          infoGain.setBinarizeNumericAttributes(binarize);
          evaluator = infoGain;
        } else {
          ChiSquaredAttributeEval chiSquared = new ChiSquaredAttributeEval();
          chiSquared.setBinarizeNumericAttributes(binarize);
          evaluator = chiSquared;
        }
        evaluator.buildEvaluator(data);
        Ranker ranker = new Ranker();
        ranker.search(evaluator, data);
        out.append("# ").append(metric).append(binarize ? " -B" : "").append('\n');
        for (double[] entry : ranker.rankedAttributes()) {
          int index = (int) entry[0];
          out.append(index + 1).append('\t').append(data.attribute(index).name()).append('\t')
              .append(Double.toString(entry[1])).append('\n');
        }
      }
    }
  }
}
