import java.io.BufferedReader;
import java.io.FileInputStream;
import java.io.InputStreamReader;

import weka.core.Instance;
import weka.core.Instances;

/**
 * Reads each ARFF file named on the command line with Weka's own reader and prints one
 * line per file: the file, a tab, then "OK" and every row ("|" before each row: its values
 * separated by ",", numbers and dates by Double.toString, missing as "?", then " w=" and
 * the weight), or "ERR" and Weka's message.  Used by tests/arff/test_arff_grammar.py.
 */
public class WekaProbe {
    public static void main(String[] files) throws Exception {
        for (String file : files) {
            StringBuilder line = new StringBuilder(file).append('\t');
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(new FileInputStream(file), "UTF-8"))) {
                Instances data = new Instances(reader);
                line.append("OK");
                for (int row = 0; row < data.numInstances(); row++) {
                    Instance instance = data.instance(row);
                    line.append(" |");
                    for (int column = 0; column < data.numAttributes(); column++) {
                        line.append(column == 0 ? " " : ",");
                        if (instance.isMissing(column)) {
                            line.append('?');
                        } else if (data.attribute(column).isNumeric() || data.attribute(column).isDate()) {
                            line.append(Double.toString(instance.value(column)));
                        } else {
                            line.append(instance.stringValue(column));
                        }
                    }
                    line.append(" w=").append(Double.toString(instance.weight()));
                }
            } catch (Exception error) {
                line.append("ERR ").append(error.toString().replace('\n', ' '));
            }
            System.out.println(line);
        }
    }
}
