import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import weka.classifiers.Classifier;
import weka.classifiers.Evaluation;
import weka.core.converters.ConverterUtils.DataSource;

/**
 * Runs a batch of Weka 3.6 jobs in one JVM, so a test module pays one Java start for all of them.  The jobs file
 * holds one job a line, its words separated by tabs:
 *
 * <ul>
 *   <li>{@code relation FILE}: the relation name of FILE as Weka reads it;
 *   <li>{@code evaluate CLASSIFIER OPTIONS...}: what {@code java CLASSIFIER OPTIONS...} prints (the classifier's
 *       command line runs {@code Evaluation.evaluateModel} on the same options).
 * </ul>
 *
 * Each job's output follows a line "### WekaRuns K ok" (K its 0-based line number); a job that throws is reported as
 * "### WekaRuns K failed" followed by its stack trace, and the batch goes on.  Usage: java -cp weka.jar WekaRuns.java JOBS.
 */
public class WekaRuns {
  public static void main(String[] args) throws Exception {
    List<String> jobs = Files.readAllLines(Path.of(args[0]));
    StringBuilder out = new StringBuilder();
    for (int job = 0; job < jobs.size(); job++) {
      String[] words = jobs.get(job).split("\t");
      String[] rest = Arrays.copyOfRange(words, 2, words.length);
      try {
        String result;
        if (words[0].equals("relation")) {
          result = DataSource.read(words[1]).relationName() + "\n";
        } else if (words[0].equals("evaluate")) {
          Classifier classifier = (Classifier) Class.forName(words[1]).getDeclaredConstructor().newInstance();
          result = Evaluation.evaluateModel(classifier, rest);
        } else {
          throw new IllegalArgumentException("unknown job " + words[0]);
        }
        out.append("### WekaRuns ").append(job).append(" ok\n").append(result);
      } catch (Exception error) {
        StringWriter trace = new StringWriter();
        error.printStackTrace(new PrintWriter(trace));
        out.append("### WekaRuns ").append(job).append(" failed\n").append(trace);
      }
    }
    System.out.print(out);
  }
}
