import { tearDown } from './softhsm-global';

export default tearDown;
